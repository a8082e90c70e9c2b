package render

import "github.com/slack-go/slack"

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
