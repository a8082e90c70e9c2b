package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// networkLookupTimeout bounds the store read behind a command's allow list
// (SessionNetwork, below).
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

// Network is what the bot tells h9's egress proxy: a host allowed in the
// thread reaches the session's running commands at once (later commands
// get it from SessionNetwork).
type Network interface {
	Allow(sessionID, entry string) error
}

// knownAction: an action id h9 renders.
func knownAction(id string) bool { return render.ChoiceLabel(id) != "" || render.IsNetworkAction(id) }

// NetworkRefused is the egress proxy's news that a command of the session
// was refused hostPort, which an entry could allow; the session's actor
// tells the thread once. It does not block.
func (b *Bot) NetworkRefused(sessionID, command, hostPort string) {
	key, ok := threadOf(sessionID)
	if !ok {
		b.log.Warn("a refusal for a session id that is not team/channel/thread", "session", sessionID)
		return
	}
	b.reg.deliver(key, msgNetworkRefused{command: command, hostPort: hostPort})
}

// msgNetworkRefused: the proxy refused a host to one of the session's commands.
type msgNetworkRefused struct{ command, hostPort string }

func (m msgNetworkRefused) handle(a *actor) {
	if a.rec != nil && !a.lost {
		a.apply(evNetworkRefused(m))
	}
}

// networkClick checks who pressed a refused host's button: the owner or
// an admin; Allow for <repo> is the admins' alone (the machine checks).
func (a *actor) networkClick(m msgAction) {
	if !a.b.perms.canControl(a.rec, m.user) {
		a.postEphemeral(m.user, controlRefusal(m.action, a.rec.Owner))
		return
	}
	a.apply(evNetworkClick{user: m.user, action: m.action, hostPort: m.value.StepID, admin: a.b.perms.admins[m.user]})
}

// effAllowNow tells the proxy of a host allowed for the session's
// running commands; effAllowForRepo adds it to the repository's stored
// allow list (→ evRepoAllowed).
type (
	effAllowNow     struct{ hostPort string }
	effAllowForRepo struct{ user, repo, hostPort string }
)

func (e effAllowNow) String() string     { return "allow " + e.hostPort + " now" }
func (e effAllowForRepo) String() string { return "allow " + e.hostPort + " for " + e.repo }

func (e effAllowNow) run(a *actor) {
	if a.b.cfg.Network == nil {
		return
	}
	if err := a.b.cfg.Network.Allow(a.rec.ID, e.hostPort); err != nil {
		a.log.Warn("telling the proxy of an allowed host", "host", e.hostPort, "err", err)
	}
}

func (e effAllowForRepo) run(a *actor) {
	err := a.b.addRepoAllowed(a.ctx, e.repo, e.hostPort)
	a.apply(evRepoAllowed{user: e.user, repo: e.repo, hostPort: e.hostPort, err: err})
}

// The allow lists added from threads, per repository, are kept as a
// setting of a channel no Slack channel can be named: one line per entry.
const (
	repoNetworkChannel = "h9:repo-network"
	maxRepoAllowed     = 200
)

// repoAllowed is what threads added to repo's allow list.
func (b *Bot) repoAllowed(ctx context.Context, repo string) ([]string, error) {
	v, err := b.store.ChannelSetting(ctx, repoNetworkChannel, repo)
	if err != nil || v == "" {
		return nil, err
	}
	return strings.Split(v, "\n"), nil
}

// addRepoAllowed adds entry to repo's stored allow list. Another replica
// may add one at the same time: the write is read back and tried again
// until both are there.
func (b *Bot) addRepoAllowed(ctx context.Context, repo, entry string) error {
	for range 5 {
		list, err := b.repoAllowed(ctx, repo)
		if err != nil {
			return err
		}
		if slices.Contains(list, entry) {
			return nil
		}
		if len(list) >= maxRepoAllowed {
			return errTooManyAllowed
		}
		if err := b.store.SetChannelSetting(ctx, repoNetworkChannel, repo, strings.Join(append(list, entry), "\n")); err != nil {
			return err
		}
	}
	return errAllowRaced
}

// SessionNetwork is what the thread added to a session's allow list: its
// repository's stored entries and the session's own, for the egress proxy
// when a command starts; repo is the session's repository ("" for none).
func (b *Bot) SessionNetwork(ctx context.Context, sessionID string) (repo string, allowed []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, networkLookupTimeout)
	defer cancel()
	s, err := b.sessionByID(ctx, sessionID)
	if err != nil || s == nil {
		return "", nil, err
	}
	if s.Repo != nil {
		repo = s.Repo.Name
		if allowed, err = b.repoAllowed(ctx, repo); err != nil {
			return "", nil, err
		}
	}
	if s.Network != nil {
		allowed = append(allowed, s.Network.Allowed...)
	}
	return repo, allowed, nil
}

var (
	errTooManyAllowed = errors.New("the repository's allow list from threads is full")
	errAllowRaced     = errors.New("other replicas kept changing the repository's allow list")
)

// `/h9 repos forget <repo> <entry>` removes a host that a thread allowed
// for a repository (Allow for <repo>): an admin's undo. The configured
// list (H9_REPOS_FILE) is not touched.

const forgetUsage = "`/h9 repos` lists the repositories; `/h9 repos forget <repo> <host:port>` removes a host allowed for a repository from a thread (h9 admins)."

// forgetAck checks `/h9 repos <arg>` before the ack.
func (b *Bot) forgetAck(user, arg string) (why string) {
	sub, rest := parseCommand(arg)
	fields := strings.Fields(rest)
	switch {
	case sub != "forget" || len(fields) != 2:
		return "Sorry, I did not understand that. " + forgetUsage
	case !b.perms.admins[user]:
		return "Only an h9 admin can remove a host allowed for a repository."
	case b.cfg.Repos == nil:
		return "h9 has no repositories configured."
	}
	if _, ok := b.cfg.Repos.Get(fields[0]); !ok {
		return "There is no repository `" + render.Escape(fields[0]) + "`: " + b.repoNames() + "."
	}
	return ""
}

// runForget removes the entry, after the ack; sessions' commands started
// from then on no longer have it (running ones keep what they had).
func (b *Bot) runForget(cmd slack.SlashCommand, arg string, log *slog.Logger) {
	answer := func(s string) { b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text(s)) }
	_, rest := parseCommand(arg)
	fields := strings.Fields(rest)
	repo, entry := fields[0], fields[1]
	removed, err := b.removeRepoAllowed(repo, entry)
	switch {
	case err != nil:
		log.Error("removing a repository's allowed host", "repo", repo, "entry", entry, "err", err)
		answer("h9 could not change " + repo + "'s allow list just now; nothing was changed. Try again in a moment.")
	case !removed:
		answer("`" + render.Escape(entry) + "` was not allowed for " + render.Escape(repo) + " from a thread, so nothing changed (`/h9 repos` lists what was).")
	default:
		log.Info("a repository's allowed host removed", "repo", repo, "entry", entry, "by", cmd.UserID)
		answer("Removed `" + render.Escape(entry) + "` from " + render.Escape(repo) + "'s allow list: commands started from now on cannot reach it.")
	}
}

// removeRepoAllowed takes entry off repo's stored list, read back like
// addRepoAllowed so a replica's concurrent add is kept.
func (b *Bot) removeRepoAllowed(repo, entry string) (bool, error) {
	for range 5 {
		list, err := b.repoAllowed(b.bg, repo)
		if err != nil {
			return false, err
		}
		i := slices.Index(list, entry)
		if i < 0 {
			return false, nil
		}
		list = slices.Delete(list, i, i+1)
		if err := b.store.SetChannelSetting(b.bg, repoNetworkChannel, repo, strings.Join(list, "\n")); err != nil {
			return false, err
		}
		if now, err := b.repoAllowed(b.bg, repo); err == nil && !slices.Contains(now, entry) {
			return true, nil
		}
	}
	return false, errAllowRaced
}
