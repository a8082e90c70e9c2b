package bot

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
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
