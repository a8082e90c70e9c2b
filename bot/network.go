package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// networkLookupTimeout bounds the store read behind a command's allow list
// (SessionNetwork, network_actor.go).
const networkLookupTimeout = 10 * time.Second

// sessionByID reads a session from the store; nil when there is none.
func (b *Bot) sessionByID(ctx context.Context, sessionID string) (*Session, error) {
	_, channel, thread, ok := ParseSessionID(sessionID)
	if !ok {
		return nil, fmt.Errorf("session id %q is not team/channel/thread", sessionID)
	}
	ctx, cancel := context.WithTimeout(ctx, networkLookupTimeout)
	defer cancel()
	rec, err := b.store.FindThread(ctx, channel, thread)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeSession(rec)
}

// allowedText is what threads added to repo's allow list, for /h9 repos.
func (b *Bot) allowedText(repo string) string {
	list, err := b.repoAllowed(b.bg, repo)
	if err != nil {
		return ", allowed from threads: (h9 could not read them: " + render.Escape(err.Error()) + ")"
	}
	if len(list) == 0 {
		return ""
	}
	return ", allowed from threads: `" + render.Escape(strings.Join(list, "`, `")) + "`"
}

// networkText is a repository's allow list for /h9 repos ("" for none).
func networkText(n gitrepo.Network) string {
	if n.Empty() {
		return ", no network"
	}
	var parts []string
	for _, p := range n.Presets {
		parts = append(parts, "preset "+render.Escape(p))
	}
	for _, e := range n.Allow {
		parts = append(parts, "`"+render.Escape(e)+"`")
	}
	return ", network: " + strings.Join(parts, ", ")
}
