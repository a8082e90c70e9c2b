package render

import (
	"strconv"
	"strings"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/textcut"
	"github.com/slack-go/slack"
)

// RepoLine names a session's repository and branch (root message, checklist).
type RepoLine struct {
	Repo, Branch string
	Base         string // "" = the repository's default branch
}

// Text is the line in mrkdwn: *backend* · branch `h9/x` from `main`.
func (l RepoLine) Text() string {
	s := "*Repository:* " + safeLine(l.Repo, 100) + " · branch " + inlineCode(l.Branch, 120)
	if l.Base != "" {
		s += " from " + inlineCode(l.Base, 120)
	}
	return s
}

// plain is the line for a message's text: repository backend, branch h9/x.
func (l RepoLine) plain() string {
	return "repository " + safeLine(l.Repo, 100) + ", branch " + safeLine(l.Branch, 120)
}

// DiffComment is the text sharing a session branch's diff in its thread.
func DiffComment(l RepoLine) string {
	s := "The whole diff of " + inlineCode(l.Branch, 120)
	if l.Base != "" {
		s += " against " + inlineCode(l.Base, 120)
	}
	return s + "."
}

// WithRepo adds the repository line to a root message, before its hint.
func WithRepo(root Message, l RepoLine) Message {
	line := contextLine("h9_root_repo", l.Text())
	n := len(root.Blocks)
	if n == 0 {
		root.Blocks = blocks(line)
	} else {
		root.Blocks = append(root.Blocks[:n-1:n-1], line, root.Blocks[n-1])
	}
	root.Text += " (" + l.plain() + ")"
	return root
}

// maxSetupOutput bounds the setup output shown in the thread.
const maxSetupOutput = 2800

// RenderSetupFailed reports that the repository's setup command (or the
// checkout) failed, with the last lines of its output and a Retry.
func RenderSetupFailed(sessionID, what, output string) Message {
	bs := blocks(section("h9_setup_failed", ":x: *Setup failed:* "+whatText(what, "the workspace could not be prepared")+
		"\nFix the cause and press Retry to run it again; the session starts once it succeeds."))
	if strings.TrimSpace(output) != "" {
		bs = append(bs, section("h9_setup_output", codeBlock(output, maxSetupOutput)))
	}
	bs = append(bs, actions(BlockRetryActions, button(ActionRetry, LabelRetry, ButtonValue{SessionID: sessionID}, slack.StylePrimary)))
	text := "Setup failed: " + lineOr(what, "the workspace could not be prepared") + ". Press Retry."
	if tail := textcut.LastLines(output, setupTextLines); tail != "" {
		text += "\n" + safeText(tail, maxSetupText)
	}
	return Message{Text: text, Blocks: bs}
}

// The setup failure's text ends with the last setupTextLines lines of the
// output, at most maxSetupText units: enough to name the cause.
const (
	setupTextLines = 10
	maxSetupText   = 1500
)

// FileLine is one changed file of a session branch.
type FileLine struct {
	Path           string
	Added, Deleted int
	Binary         bool
}

// Changes is what the outcome message says of a session branch.
type Changes struct {
	RepoLine
	Files          []FileLine
	Added, Deleted int
	CanOpenPR      bool   // the Open pull request button
	MergeRequest   bool   // the forge is GitLab: the button reads Open merge request
	PullRequest    string // the pull request already open, if any
}

// The outcome lists at most maxChangedFiles files by name, each path cut
// at maxChangedPath: the section stays within Slack's 3000 characters.
const (
	maxChangedFiles = 15
	maxChangedPath  = 100
)

// PlusMinus is `+a −d`, as every h9 message counts lines.
func PlusMinus(added, deleted int) string {
	return "+" + strconv.Itoa(added) + " −" + strconv.Itoa(deleted)
}

// RenderRepoDone is the outcome of a session done with a repository: the
// Done line and the agent's final words, the files changed with their
// +added −removed lines, and Push branch / Open pull request (no buttons
// when nothing changed).
func RenderRepoDone(sessionID, finalText string, p planning.Progress, c Changes) Message {
	done := RenderDone(finalText, p)
	bs := append(done.Blocks, section("h9_changes", changesText(c)))
	if len(c.Files) > 0 {
		bs = append(bs, repoButtons(sessionID, c))
	}
	text := done.Text + " No changes to the repository."
	if len(c.Files) > 0 {
		text = done.Text + " " + filesChanged(len(c.Files)) + " " + PlusMinus(c.Added, c.Deleted) + " on " + safeLine(c.Branch, 120) + ": " + fileList(c.Files, textChangedFiles)
	}
	return Message{Text: text, Blocks: bs}
}

// textChangedFiles: the outcome's text names the first few files.
const textChangedFiles = 5

// fileList is "a.go +1 −0, b.go binary" for the first n files, and how many more.
func fileList(files []FileLine, n int) string {
	parts := make([]string, 0, min(len(files), n)+1)
	for i, f := range files {
		if i == n {
			parts = append(parts, "and "+strconv.Itoa(len(files)-n)+" more")
			break
		}
		parts = append(parts, fileLine(f))
	}
	return strings.Join(parts, ", ")
}

// fileLine is one file and its +added −removed lines (or "binary").
func fileLine(f FileLine) string {
	stat := PlusMinus(f.Added, f.Deleted)
	if f.Binary {
		stat = "binary"
	}
	return plainWords(f.Path, maxChangedPath) + " " + stat
}

// filesChanged is "1 file changed", "2 files changed".
func filesChanged(n int) string {
	if n == 1 {
		return "1 file changed"
	}
	return strconv.Itoa(n) + " files changed"
}

func changesText(c Changes) string {
	var b strings.Builder
	b.WriteString(c.RepoLine.Text() + "\n")
	if len(c.Files) == 0 {
		b.WriteString("_No changes to the repository, so there is nothing to push._")
		return b.String()
	}
	b.WriteString("*" + filesChanged(len(c.Files)) + "* " + PlusMinus(c.Added, c.Deleted) + "\n")
	for i, f := range c.Files {
		if i == maxChangedFiles {
			b.WriteString("…and " + strconv.Itoa(len(c.Files)-i) + " more (see the diff)\n")
			break
		}
		b.WriteString("• " + fileLine(f) + "\n")
	}
	if c.PullRequest != "" {
		b.WriteString("Pull request: " + safeLine(c.PullRequest, 300) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// repoButtons are Push branch and, when it can be done, Open pull request.
func repoButtons(sessionID string, c Changes) *slack.ActionBlock {
	v := ButtonValue{SessionID: sessionID}
	els := []*slack.ButtonBlockElement{button(ActionPushBranch, LabelPushBranch, v, "")}
	if c.CanOpenPR {
		label := LabelOpenPR
		if c.MergeRequest {
			label = LabelOpenMR
		}
		els = append(els, button(ActionOpenPR, label, v, slack.StylePrimary))
	}
	return actions(BlockRepoActions, els...)
}
