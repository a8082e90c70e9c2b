package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// doctorAutomations is h9 doctor's line per automation (ARCHITECTURE.md,
// "Automations"): its channel joined (and a message trigger's watched
// channel), its repository reachable, a schedule's next occurrence, a
// webhook's secret present. The operator's
// H9_AUTOMATIONS_FILE is read (start-up already refused an invalid one);
// a repository's .h9/automations.yaml is read from h9's cache of its
// default branch, as h9 last fetched it.
func doctorAutomations(ctx context.Context, cfg Config) finding {
	if len(cfg.repos) == 0 && cfg.AutomationsFile == "" {
		return ok("none defined (H9_AUTOMATIONS_FILE, a repository's .h9/automations.yaml)")
	}
	env := cfg.automationEnv()
	var list []*automation.Automation
	var notes []string
	worst := verdictOK
	if cfg.AutomationsFile != "" {
		l, err := automation.LoadFile(cfg.AutomationsFile, env)
		if err != nil {
			return failed("fix the line it names", "%s", unwrapAutomation(err))
		}
		list = l
	}
	var repos *gitrepo.Repos
	if len(cfg.repos) > 0 {
		r, err := cfg.newRepos(nil)
		if err != nil {
			return failed("check H9_DATA_DIR and that git is installed", "%v", err)
		}
		defer r.Close()
		repos = r
		for _, repo := range cfg.repos {
			data, found, err := repos.ReadDefaultBranchFile(ctx, repo.Name, automation.RepoFilePath)
			switch {
			case err != nil:
				notes = append(notes, fmt.Sprintf("%s %s/%s: not read: %s", verdictOK.mark(), repo.Name, automation.RepoFilePath, oneLine(err)))
				continue
			case !found:
				continue
			}
			l, err := automation.ParseRepoFile(automation.RepoFile{Repo: repo.Name, Channels: repo.Channels}, data, env)
			if err != nil {
				worst = max(worst, verdictWarn)
				notes = append(notes, verdictWarn.mark()+" "+unwrapAutomation(err)+" (its last valid version stays in force)")
				continue
			}
			list = append(list, l...)
		}
	}
	if len(list) == 0 && len(notes) == 0 {
		return ok("none defined (H9_AUTOMATIONS_FILE, a repository's .h9/automations.yaml)")
	}
	api := slackClient(cfg, cfg.SlackBotToken)
	joined := map[string]string{}   // channel → "" or why not
	reachable := map[string]error{} // repository → CheckRemote's error
	now := time.Now()
	var lines []string
	for _, a := range list {
		line, v := checkAutomation(ctx, a, now, api, repos, joined, reachable)
		worst = max(worst, v)
		lines = append(lines, v.mark()+" "+a.Name+": "+line)
	}
	f := ok("%d defined", len(list))
	f.verdict, f.more = worst, append(lines, notes...)
	if worst != verdictOK {
		f.hint = "fix each ⚠ below: an automation that cannot start says so in its channel and pauses after three tries"
	}
	return f
}

// checkAutomation is one automation's line and verdict; joined and
// reachable remember what was asked already.
func checkAutomation(ctx context.Context, a *automation.Automation, now time.Time, api *slack.Client, repos *gitrepo.Repos,
	joined map[string]string, reachable map[string]error) (string, verdict) {
	v := verdictOK
	parts := []string{a.Describe()}
	switch a.Trigger.Kind {
	case automation.KindSchedule:
		if next := a.Next(now); next.IsZero() {
			parts, v = append(parts, "it never comes"), verdictWarn
		} else {
			parts = append(parts, "next "+next.In(cmp.Or(a.Zone, time.UTC)).Format("Mon 2 Jan 2006 15:04 MST"))
		}
	case automation.KindWebhook:
		if _, set := os.LookupEnv(a.Trigger.SecretEnv); !set || a.Broken != "" {
			parts, v = append(parts, a.Trigger.SecretEnv+" is not set"), verdictWarn
		} else {
			parts = append(parts, a.Trigger.SecretEnv+" is set")
		}
	}
	channels := []string{a.Channel}
	if a.Trigger.Watch != "" && a.Trigger.Watch != a.Channel {
		channels = append(channels, a.Trigger.Watch) // h9 must be in it to hear the alerts
	}
	for _, ch := range channels {
		why, asked := joined[ch]
		if !asked {
			why = channelJoined(ctx, api, ch)
			joined[ch] = why
		}
		if why != "" {
			parts, v = append(parts, why), verdictWarn
		} else {
			parts = append(parts, "h9 is in <#"+ch+">")
		}
	}
	if a.Repo != "" && repos != nil {
		err, asked := reachable[a.Repo]
		if !asked {
			_, err = repos.CheckRemote(ctx, a.Repo)
			reachable[a.Repo] = err
		}
		if err != nil {
			parts, v = append(parts, oneLine(err)), verdictWarn
		} else {
			parts = append(parts, a.Repo+" is reachable")
		}
	}
	return strings.Join(parts, "; "), v
}

// channelJoined asks conversations.history for one message (the history
// scopes h9 has): "" when h9 is in the channel, else why it is not.
func channelJoined(ctx context.Context, api *slack.Client, channel string) string {
	_, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: channel, Limit: 1})
	var se slack.SlackErrorResponse
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se) && se.Err == "not_in_channel":
		return "h9 is not in <#" + channel + ">: invite it (/invite @h9)"
	case errors.As(err, &se) && se.Err == "channel_not_found":
		return "<#" + channel + "> is not found (a private channel h9 is not in, or a wrong ID)"
	}
	return "could not ask Slack whether h9 is in <#" + channel + ">: " + oneLine(err)
}
