package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/h9-app/h9/planning"
)

// Evidence layout on a ✔ line: at most evidenceCalls of the latest calls,
// each target cut to maxEvidenceTarget, the whole (with " — ") at most
// maxEvidence units, so the todo's own words keep most of the line.
const (
	evidenceCalls     = 2
	maxEvidenceTarget = 32
	maxEvidence       = 140
	evidenceSep       = " · "
	// maxEvidenceTool fits an MCP tool's name (<server>__<tool>, at most
	// 64): the ✔ line names the tool that did the work.
	maxEvidenceTool = 64
)

// evidenceText is a completed todo's evidence in a few words, e.g.
// "write_file hello.txt · bash go test ./... ✓ · a1b2c3d +12 −3",
// within maxEvidence units; "" when there is none. The checkpoint always
// shows, then the latest calls that fit, and how many calls are not shown.
// Targets come from the model: plain words as the contract writes them
// (inline code would split "write_file hello.txt"), escaped.
func evidenceText(e planning.Evidence) string {
	var tail string
	if cp := e.Checkpoint; cp != nil && OneLine(cp.Commit) != "" {
		tail = plainWords(cp.Commit, 16) + " +" + strconv.Itoa(cp.Added) + " −" + strconv.Itoa(cp.Deleted)
	}
	budget := maxEvidence - Len(" — ") - Len(tail) - Len(evidenceSep) - Len("+9999 earlier")
	var shown []string
	for i := len(e.Calls) - 1; i >= 0 && len(shown) < evidenceCalls; i-- {
		c := callText(e.Calls[i])
		if budget -= Len(c) + Len(evidenceSep); budget < 0 {
			break
		}
		shown = append(shown, c)
	}
	slices.Reverse(shown)
	if earlier := min(e.Made-len(shown), 9999); earlier > 0 && len(shown) > 0 {
		shown = append([]string{"+" + strconv.Itoa(earlier) + " earlier"}, shown...)
	}
	if tail != "" {
		shown = append(shown, tail)
	}
	return strings.Join(shown, evidenceSep)
}

// callText is one call: its tool, its target and, for a command or a
// failure, how it ended.
func callText(c planning.ToolRun) string {
	s := safeLine(c.Tool, maxEvidenceTool)
	if OneLine(c.Target) != "" {
		s += " " + plainWords(c.Target, maxEvidenceTarget)
	}
	switch {
	case c.Exit != nil && !c.Failed:
		s += " ✓"
	case c.Exit != nil:
		s += " ✗ exit " + strconv.Itoa(min(max(*c.Exit, -999), 999))
	case c.Failed:
		s += " ✗"
	}
	return s
}

// withEvidence is a todo's content, then " — " and its evidence, the
// content cut so that both fit in max units.
func withEvidence(content string, e planning.Evidence, max int) string {
	ev := evidenceText(e)
	if ev == "" {
		return safeLine(content, max)
	}
	ev = " — " + ev
	return safeLine(content, max-Len(ev)) + ev
}

// plainWords is model text for the middle of a line: escaped, cut, and
// with backticks made quotes, so it cannot open a code span that would
// swallow the rest of the line.
func plainWords(s string, max int) string {
	return safeLine(strings.ReplaceAll(s, "`", "'"), max)
}
