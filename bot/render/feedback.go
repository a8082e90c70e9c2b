package render

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/workspace/textcut"
)

// FeedbackBatch is one poll's review feedback and failing checks on the
// session's request, as its thread message shows them.
type FeedbackBatch struct {
	SessionID string
	Seq       int    // the batch's number: its buttons carry it
	Request   string // "PR #12", "MR !12"
	URL       string
	Comments  []FeedbackLine
	Checks    []CheckLine
	LeftOut   int    // comments by people without write access
	Auto      bool   // follow_up: auto: the work has started (Stop)
	Busy      bool   // a run is going on: Address feedback waits for it
	AutoNext  bool   // with Busy, follow_up: auto: h9 starts on it once the run ends
	QueuedBy  string // pressed Address feedback during the run: h9 starts on it once the run ends
	// Decided replaces the buttons once pressed: DecidedBy's mention,
	// then the words.
	Decided, DecidedBy string
}

// FeedbackLine is one comment or review, briefly.
type FeedbackLine struct {
	Kind, Author, Path string
	Line               int
	Body               string
}

// CheckLine is a failing check, its page and the end of its log (for a
// commit status without a log, its description).
type CheckLine struct{ Name, State, URL, Log string }

// Bounds of a batch message: the items it lists and what each shows.
const (
	maxFeedbackLines = 10
	maxFeedbackBody  = 500 // a comment's body, quoted with its line breaks
	maxTextBody      = 300 // a comment's body in the fallback text, on one line
	checkLogLines    = 5
	maxCheckLog      = 600
)

// Headline is the batch's first line: `PR #12: 3 review comments from
// @alice, 1 failing check (build)`.
func (b FeedbackBatch) Headline() string {
	var parts []string
	if n := len(b.Comments); n > 0 {
		parts = append(parts, plural(n, "review comment")+" from "+authors(b.Comments))
	}
	if n := len(b.Checks); n > 0 {
		names := make([]string, 0, n)
		for _, c := range b.Checks {
			names = append(names, OneLine(c.Name))
		}
		parts = append(parts, plural(n, "failing check")+" ("+strings.Join(names, ", ")+")")
	}
	if len(parts) == 0 {
		parts = append(parts, "no feedback h9 may act on")
	}
	return b.Request + ": " + strings.Join(parts, ", ")
}

// RenderFeedbackBatch is the batch's thread message with Address feedback
// and Ignore, or (auto) the news that the work has started, with Stop.
func RenderFeedbackBatch(b FeedbackBatch) Message {
	head := safeLine(b.Headline(), 400)
	if b.URL != "" {
		head = "<" + escapeCut(b.URL, 500) + "|" + safeLine(b.Request, 40) + ">" + strings.TrimPrefix(head, Escape(b.Request))
	}
	bs := blocks(section("h9_feedback_head", ":speech_balloon: *"+head+"*"))
	if list := b.items(); list != "" {
		bs = append(bs, section("h9_feedback_items", list))
	}
	if note := b.leftOutNote(); note != "" {
		bs = append(bs, contextLine("h9_feedback_left_out", note))
	}
	// The fallback text is what notifications and text-only clients show:
	// the feedback itself, and who decided what, as the blocks do.
	text := safeText(b.Headline()+"\n"+b.plainItems(), 2500)
	v := ButtonValue{SessionID: b.SessionID, Revision: b.Seq}
	switch {
	case b.Decided != "":
		words := safeLine(b.Decided, 300)
		if b.DecidedBy != "" {
			words = mention(b.DecidedBy) + " " + words
		}
		bs = append(bs, contextLine("h9_feedback_decided", words))
		text += "\n" + words
	case len(b.Comments)+len(b.Checks) == 0:
	case b.Auto:
		bs = append(bs, contextLine("h9_feedback_auto", "h9 has started addressing it (follow_up: auto)."),
			actions(BlockFeedbackActions, button(ActionStop, LabelStop, ButtonValue{SessionID: b.SessionID}, slack.StyleDanger)))
		text += "\nh9 has started addressing it."
	default:
		switch {
		case b.QueuedBy != "":
			bs = append(bs, contextLine("h9_feedback_busy", mention(b.QueuedBy)+" asked h9 to address this once the run ends."))
		case b.Busy && b.AutoNext:
			bs = append(bs, contextLine("h9_feedback_busy", "A run is going on: once it ends, h9 starts addressing this (follow_up: auto); if it is stopped or fails, press Address feedback."))
		case b.Busy:
			bs = append(bs, contextLine("h9_feedback_busy", "A run is going on: press Address feedback once it ends."))
		}
		bs = append(bs, actions(BlockFeedbackActions,
			button(ActionAddressFeedback, LabelAddressFeedback, v, slack.StylePrimary),
			button(ActionIgnoreFeedback, LabelIgnoreFeedback, v, "")))
	}
	return Message{Text: text, Blocks: bs}
}

// items lists each comment (path:line for inline ones) and each check
// with the last lines of its log.
func (b FeedbackBatch) items() string {
	var sb strings.Builder
	for i, c := range b.Comments {
		if i == maxFeedbackLines {
			fmt.Fprintf(&sb, "… and %d more\n", len(b.Comments)-i)
			break
		}
		sb.WriteString("• *@" + safeLine(c.Author, 60) + "*")
		if c.Path != "" {
			sb.WriteString(" on " + inlineCode(c.Path+":"+strconv.Itoa(c.Line), 160))
		} else if c.Kind == "review" {
			sb.WriteString(" (review)")
		}
		sb.WriteString(":\n" + quote(clean(c.Body), maxFeedbackBody) + "\n")
	}
	for _, c := range b.Checks {
		name := safeLine(c.Name, 100)
		if u := linkTarget(c.URL); u != "" {
			name = "<" + u + "|" + name + ">"
		}
		sb.WriteString("• :x: check *" + name + "* " + safeLine(c.State, 30) + "\n")
		if log := textcut.LastLines(c.Log, checkLogLines); log != "" {
			sb.WriteString(codeBlock(log, maxCheckLog) + "\n")
		}
	}
	return Truncate(strings.TrimRight(sb.String(), "\n"), 2900)
}

// plainItems is items as plain text (unescaped, one line each), for the
// message's fallback text.
func (b FeedbackBatch) plainItems() string {
	var lines []string
	for i, c := range b.Comments {
		if i == maxFeedbackLines {
			lines = append(lines, fmt.Sprintf("… and %d more", len(b.Comments)-i))
			break
		}
		where := ""
		if c.Path != "" {
			where = " on " + OneLine(c.Path) + ":" + strconv.Itoa(c.Line)
		}
		lines = append(lines, "@"+OneLine(c.Author)+where+": "+Truncate(OneLine(c.Body), maxTextBody))
	}
	for _, c := range b.Checks {
		lines = append(lines, "check "+OneLine(c.Name)+" "+OneLine(c.State))
	}
	return strings.Join(lines, "\n")
}

func (b FeedbackBatch) leftOutNote() string {
	if b.LeftOut == 0 {
		return ""
	}
	return plural(b.LeftOut, "comment") + " left out: their authors have no write access to the repository, " +
		"so h9 never gives them to the agent. h9's own comments are skipped."
}

// authors is @alice, @bob: each author once, in order.
func authors(cs []FeedbackLine) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.Author] {
			seen[c.Author] = true
			names = append(names, "@"+OneLine(c.Author))
		}
	}
	return strings.Join(names, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// linkTarget is u escaped for a Slack link, or "" when it is not an
// http(s) URL a link can carry whole (the forge gives it; CI sets it).
func linkTarget(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "https" && parsed.Scheme != "http" || parsed.Host == "" || strings.ContainsAny(u, "|<> \n") || len(u) > 500 {
		return ""
	}
	return Escape(u)
}
