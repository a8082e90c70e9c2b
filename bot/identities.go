package bot

import (
	"context"
	"log/slog"
	"sync"

	"github.com/h9-app/h9/workspace/gitrepo"
)

// maxIdentities bounds the users whose identity the bot remembers.
const maxIdentities = 1024

// identities remembers users.info answers: a session's every checkpoint
// names its owner. Safe for concurrent use.
type identities struct {
	mu    sync.Mutex
	known map[string]*gitrepo.Identity
}

func (b *Bot) identity(ctx context.Context, log *slog.Logger, user string) *gitrepo.Identity {
	b.idents.mu.Lock()
	id, ok := b.idents.known[user]
	b.idents.mu.Unlock()
	if ok {
		return id
	}
	name, email, ok := b.api.UserIdentity(ctx, log, user)
	if !ok {
		return nil // asked again next time: Slack may have failed
	}
	id = &gitrepo.Identity{Name: name, Email: email}
	b.idents.mu.Lock()
	defer b.idents.mu.Unlock()
	if b.idents.known == nil || len(b.idents.known) >= maxIdentities {
		b.idents.known = map[string]*gitrepo.Identity{}
	}
	b.idents.known[user] = id
	return id
}
