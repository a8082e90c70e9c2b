package slackapi

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/slack-go/slack"
)

// maxPermalinks bounds the permalinks remembered: /h9 status and the Home
// tab show at most 20 sessions each, so a few thousand cover every recent
// one without growing with all the threads h9 ever saw.
const maxPermalinks = 4096

// Permalink returns a link to a message, cached; when Slack cannot say, a
// link built from the API URL that Slack redirects to the message.
func (s *Client) Permalink(ctx context.Context, log *slog.Logger, channel, ts string) string {
	key := channel + "/" + ts
	if link, ok := s.permalinks.get(key); ok {
		return link
	}
	if s.noPermalinks.Load() {
		return builtPermalink(s.apiURL, channel, ts)
	}
	var link string
	err := s.Call(ctx, log, "chat.getPermalink", func(ctx context.Context) error {
		var err error
		link, err = s.c.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: channel, Ts: ts})
		return err
	})
	if errorIs(err, "unknown_method") {
		s.noPermalinks.Store(true) // this endpoint will never have it
	}
	if err != nil || link == "" {
		return builtPermalink(s.apiURL, channel, ts)
	}
	s.permalinks.put(key, link)
	return link
}

// builtPermalink is Slack's archive URL shape: /archives/C…/p<ts without dot>.
func builtPermalink(apiURL, channel, ts string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(apiURL, "/"), "/api")
	return base + "/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

// linkCache remembers up to a bound of permalinks, forgetting the oldest
// first. Safe for concurrent use.
type linkCache struct {
	mu    sync.Mutex
	links map[string]string
	ring  []string // keys in insertion order, for eviction; grows to max
	next  int
	max   int
}

func newLinkCache(n int) *linkCache {
	return &linkCache{links: make(map[string]string), max: n}
}

func (c *linkCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	link, ok := c.links[key]
	return link, ok
}

func (c *linkCache) put(key, link string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.links[key]; ok {
		c.links[key] = link
		return
	}
	c.links[key] = link
	if len(c.ring) < c.max {
		c.ring = append(c.ring, key)
		return
	}
	delete(c.links, c.ring[c.next])
	c.ring[c.next] = key
	c.next = (c.next + 1) % c.max
}
