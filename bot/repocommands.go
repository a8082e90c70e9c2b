package bot

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// checkRepoArg refuses, in the ack, `/h9 repo NAME` for a name that is
// neither configured nor none.
func (b *Bot) checkRepoArg(arg string) string {
	if arg == "" || strings.EqualFold(arg, gitrepo.NoRepo) {
		return ""
	}
	if strings.ContainsAny(arg, " \t") {
		return "`/h9 repo` takes one name: `/h9 repo <name>`, `/h9 repo none`, or `/h9 repo` to see this channel's."
	}
	if _, ok := b.repo(arg); !ok {
		return "There is no repository `" + render.Escape(render.Truncate(arg, 100)) + "`; the repositories are " + b.repoNames() + "."
	}
	return ""
}

// runRepoCommand shows (`/h9 repo`) or sets (`/h9 repo NAME|none`) the
// channel's repository, after the ack.
func (b *Bot) runRepoCommand(cmd slack.SlashCommand, arg string, log *slog.Logger) {
	answer := func(s string) { b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text(s)) }
	if arg == "" {
		setting, err := b.store.ChannelSetting(b.bg, cmd.ChannelID, repoSetting)
		if err != nil {
			log.Error("reading the channel's repository", "err", err)
			answer("h9 could not read this channel's repository just now; try again in a moment.")
			return
		}
		answer(b.describeChannelRepo(setting, cmd.ChannelID))
		return
	}
	value := arg
	if strings.EqualFold(arg, gitrepo.NoRepo) {
		value = gitrepo.NoRepo
	} else if r, ok := b.repo(arg); ok {
		value = r.Name
	}
	if err := b.store.SetChannelSetting(b.bg, cmd.ChannelID, repoSetting, value); err != nil {
		log.Error("setting the channel's repository", "err", err)
		answer("h9 could not save this channel's repository just now; try again in a moment.")
		return
	}
	log.Info("channel repository set", "repo", value)
	if value == gitrepo.NoRepo {
		answer("New sessions in this channel start in an empty workspace, without a repository (unless a task says `[repo=…]`).")
		return
	}
	answer("New sessions in this channel work in *" + render.Escape(value) + "* (unless a task says `[repo=…]`).")
}

// describeChannelRepo says which repository a new session here gets, and why.
func (b *Bot) describeChannelRepo(setting, channel string) string {
	repo, err := b.pickRepo(taskOptions{}, setting, channel)
	change := " Change it with `/h9 repo <name>` or `/h9 repo none`; `/h9 repos` lists them."
	switch {
	case err != nil:
		return "This channel's repository is not usable: " + err.Error() + "."
	case repo.Name == "" && strings.EqualFold(setting, gitrepo.NoRepo):
		return "Sessions in this channel start in an empty workspace (set with `/h9 repo none`)." + change
	case repo.Name == "" && !b.hasRepos():
		return "h9 has no repositories configured, so sessions start in an empty workspace."
	case repo.Name == "":
		return "This channel has no repository: sessions start in an empty workspace." + change
	}
	why := "the only repository h9 has"
	switch {
	case setting != "":
		why = "set with `/h9 repo`"
	case slices.Contains(repo.Channels, channel):
		why = "this channel is listed for it in the configuration"
	}
	return "Sessions in this channel work in *" + render.Escape(repo.Name) + "* (" + why + ")." + change
}

// renderRepos answers /h9 repos.
func (b *Bot) renderRepos() render.Message {
	if !b.hasRepos() {
		return text("h9 has no repositories configured (H9_REPOS, H9_REPOS_FILE): sessions start in an empty workspace.")
	}
	var sb strings.Builder
	sb.WriteString("*Repositories* (use one with `[repo=<name>]` before a task, or `/h9 repo <name>` for the channel):\n")
	for _, r := range b.cfg.Repos.List() {
		sb.WriteString("• *" + render.Escape(r.Name) + "*: " + render.Escape(gitrepo.Redact(r.URL)))
		if r.Branch != "" {
			sb.WriteString(", base `" + render.Escape(r.Branch) + "`")
		}
		if r.GitHub != "" {
			sb.WriteString(", GitHub " + render.Escape(r.GitHub))
		}
		if r.Setup != "" {
			sb.WriteString(", setup `" + render.Escape(strings.ReplaceAll(render.Truncate(r.Setup, 80), "`", "'")) + "`")
		}
		sb.WriteString(networkText(r.Network))
		sb.WriteString(b.allowedText(r.Name))
		sb.WriteString("\n")
	}
	return text(render.Truncate(sb.String(), 3800))
}
