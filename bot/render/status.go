package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/planning"
)

// StatusRow is one session in the /h9 status answer.
type StatusRow struct {
	Task      string
	State     string // the session's state, as the bot words it
	Progress  planning.Progress
	Spend     Spend  // the session's tokens
	Permalink string // link to the thread; left out unless a plain https URL
	Updated   time.Time
	Repo      *RepoLine // the session's repository and branch; nil = none
	Request   string    // its request and whether h9 follows it ("PR #12, followed"); "" = none
}

// Status layout caps: a line per session, at most statusSections sections.
const (
	statusSections = 8
	maxStatusTask  = 150
	maxPermalink   = 400
	maxStatusLine  = 700
)

const noSessions = "There are no sessions in this channel yet. Start one with `/h9 plan &lt;task&gt;`."

// RenderStatus answers /h9 status: the sessions, most recently updated first,
// each with task, state, `x/y tasks`, its tokens and a link to its thread;
// those that do not fit are counted in "…and N more".
func RenderStatus(rows []StatusRow) Message {
	if len(rows) == 0 {
		return Message{Text: "h9: no sessions in this channel yet", Blocks: blocks(section("h9_status_empty", noSessions))}
	}
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b StatusRow) int { return b.Updated.Compare(a.Updated) })
	all := make([]string, len(rows))
	for i, r := range rows {
		all[i] = statusLine(r)
	}
	lines := fitLines(all, packCapacity(statusSections, maxStatusLine))
	head := fmt.Sprintf("*h9 sessions in this channel* (%d)", len(rows))
	bs := blocks(section("h9_status_head", head))
	bs = append(bs, packLines("h9_status_rows", lines)...)
	if hidden := len(rows) - len(lines); hidden > 0 {
		bs = append(bs, contextLine("h9_status_more", "…and "+strconv.Itoa(hidden)+" more"))
	}
	noun := "sessions"
	if len(rows) == 1 {
		noun = "session"
	}
	// The text carries the rows too (within packCapacity, far under
	// MaxMessageText): clients and tools that read only text see x/y tasks.
	t := fmt.Sprintf("h9: %d %s in this channel", len(rows), noun) + "\n" + strings.Join(lines, "\n")
	return Message{Text: t, Blocks: bs}
}

// RenderThreadStatus answers "@h9 status" inside a session's thread: that
// one session, not the channel's list.
func RenderThreadStatus(r StatusRow) Message {
	line := statusLine(r)
	return Message{
		Text:   "h9 session in this thread: " + stateLabel(r.State) + ", " + r.Progress.String() + spendClause(r.Spend),
		Blocks: blocks(section("h9_status_head", "*This thread's h9 session*"), section("h9_status_rows_0", Truncate(line, MaxSectionText))),
	}
}

func statusLine(r StatusRow) string {
	parts := []string{taskLine(r.Task, maxStatusTask), stateLabel(r.State), r.Progress.String()}
	if spend := r.Spend.String(); spend != "" {
		parts = append(parts, spend)
	}
	if r.Repo != nil {
		parts = append(parts, r.Repo.plain())
	}
	if r.Request != "" {
		parts = append(parts, safeLine(r.Request, 200))
	}
	if link := permalink(r.Permalink); link != "" {
		parts = append(parts, "<"+link+"|open thread>")
	}
	if !r.Updated.IsZero() {
		parts = append(parts, "updated "+slackDate(r.Updated))
	}
	return "• " + strings.Join(parts, " · ")
}

// permalink passes a link only if it cannot break out of <url|label>.
func permalink(s string) string {
	if !strings.HasPrefix(s, "https://") || len(s) > maxPermalink ||
		strings.ContainsAny(s, "<>|&\"' \t\r\n") {
		return ""
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return ""
		}
	}
	return s
}

// slackDate lets each reader's Slack show the time in their own time zone.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// spendClause is ", 12.3k tokens · $0.04" or "".
func spendClause(s Spend) string {
	if t := s.String(); t != "" {
		return ", " + t
	}
	return ""
}

const helpText = "*h9 runs a coding agent per Slack thread.*\n" +
	"• `/h9 plan &lt;task&gt;`: h9 explores read-only, writes a todo plan and asks you to review it " +
	"(Approve &amp; auto-run, Approve &amp; confirm each step, Keep planning, Cancel).\n" +
	"• `/h9 run &lt;task&gt;`: skip planning and start working.\n" +
	"• Options go first, in brackets: `/h9 plan [repo=backend branch=release-1.2] &lt;task&gt;` " +
	"(also `/h9 run` and `@h9`). `repo=` picks a repository (`none` for an empty workspace), `branch=` the branch to start from. " +
	"The session works on its own `h9/…` branch; when it is done you get the diff, *Push branch* and *Open pull request*.\n" +
	"• `/h9 repo &lt;name&gt;` or `/h9 repo none`: this channel's repository; `/h9 repo` shows it; `/h9 repos` lists them; " +
	"`/h9 repos forget &lt;repo&gt; &lt;host:port&gt;` removes a host a thread allowed for a repository (admins).\n" +
	"• `/h9 instructions`: this channel's instructions for the agent (house rules, given to every new session after AGENTS.md); " +
	"`/h9 instructions set &lt;text&gt;` replaces them (at most 4,000 characters), `/h9 instructions clear` removes them.\n" +
	"• `/h9 status`: this channel's sessions with their progress.\n" +
	"• `/h9 help`: this message.\n" +
	"• `@h9 &lt;task&gt;`: mention h9 to start a planning session in that message's thread.\n" +
	"Each session lives in one thread: reply in the thread to revise the plan, give the next step or follow up. " +
	"Replies sent while h9 is working are queued. Files you share in the thread (screenshots, logs) go to the agent; it can share files back.\n" +
	"A todo is ticked ✔ only after real work, which its line names; the checklist shows the session's tokens. " +
	"A session past its token budget stops with a *Raise budget* button for its owner or an admin."

// RenderHelp answers /h9 help.
func RenderHelp() Message {
	return Message{Text: "h9 help: /h9 plan, /h9 run, /h9 repo, /h9 repos, /h9 instructions, /h9 status, /h9 help, @h9", Blocks: blocks(section("h9_help", helpText))}
}

// RenderUsage answers a command h9 did not understand: what it got, then the help.
func RenderUsage(input string) Message {
	bs := []slack.Block{section("h9_usage", "Sorry, I did not understand "+inlineCode("/h9 "+input, 300)+".")}
	bs = append(bs, RenderHelp().Blocks...)
	return Message{Text: "h9: unknown command; try /h9 help", Blocks: bs}
}
