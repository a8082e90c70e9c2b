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

// networkLookupTimeout bounds the store read behind a command's allow list.
const networkLookupTimeout = 10 * time.Second

// SessionRepo is the name of the session's repository ("" for none), for
// h9's egress proxy to pick the session's allow list when a command starts.
func (b *Bot) SessionRepo(ctx context.Context, sessionID string) (string, error) {
	_, channel, thread, ok := ParseSessionID(sessionID)
	if !ok {
		return "", fmt.Errorf("session id %q is not team/channel/thread", sessionID)
	}
	ctx, cancel := context.WithTimeout(ctx, networkLookupTimeout)
	defer cancel()
	rec, err := b.store.FindThread(ctx, channel, thread)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	s, err := decodeSession(rec)
	if err != nil {
		return "", err
	}
	if s.Repo == nil {
		return "", nil
	}
	return s.Repo.Name, nil
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
