package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// PreviewWrite shows, as a capped diff, what WriteFile would change. It
// writes nothing and fails exactly where WriteFile would fail up front.
func (w *Workspace) PreviewWrite(path, content string) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	var out string
	err = w.withRoot(func(root *os.Root) error {
		old, err := readText(root, rel, path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = unifiedDiff(path, "", content, true)
			return nil
		case errors.Is(err, ErrBinary), errors.Is(err, ErrTooLarge):
			out = fmt.Sprintf("replace %s (%v) with %d bytes of new content", path, errors.Unwrap(err), len(content))
			return nil
		case err != nil:
			return err
		}
		out = unifiedDiff(path, old, content, false)
		return nil
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return scrubSecrets(out, w.sandbox.secrets), nil // shown in the thread
}

// PreviewEdit shows, as a capped diff, what EditFile would change, with the
// same errors (not found, not unique) and without writing.
func (w *Workspace) PreviewEdit(path, oldString, newString string, replaceAll bool) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	var out string
	err = w.withRoot(func(root *os.Root) error {
		old, err := readText(root, rel, path)
		if err != nil {
			return err
		}
		updated, _, err := applyEdit(old, oldString, newString, replaceAll, path)
		if err != nil {
			return err
		}
		out = unifiedDiff(path, old, updated, false)
		return nil
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return scrubSecrets(out, w.sandbox.secrets), nil // shown in the thread
}

const (
	// MaxPreviewChars caps a diff preview so it fits one Slack section (3000).
	MaxPreviewChars = 2500
	// diffContext is the number of unchanged lines around each change.
	diffContext = 3
	// maxLCSCells bounds the O(n·m) table; larger changes show as replace-all.
	maxLCSCells = 4 << 20
)

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// unifiedDiff renders a simple unified-style diff of a → b, capped at
// MaxPreviewChars with a note of what was cut.
func unifiedDiff(path, a, b string, created bool) string {
	if a == b {
		return fmt.Sprintf("(no changes to %s)", path)
	}
	ops := diffLines(splitLines(a), splitLines(b))
	var out strings.Builder
	if created {
		fmt.Fprintf(&out, "--- /dev/null\n+++ b/%s\n", path)
	} else {
		fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	}
	for _, h := range hunks(ops) {
		out.WriteString(h)
	}
	return capLines(out.String(), MaxPreviewChars)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines: common prefix and suffix, then an LCS of the middle.
func diffLines(a, b []string) []diffOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []diffOp
	for _, l := range a[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, lcsOps(a[p:len(a)-s], b[p:len(b)-s])...)
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func lcsOps(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxLCSCells {
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// t[i][j] = LCS length of a[i:], b[j:]
	w := len(b) + 1
	t := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else {
				t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || t[(i+1)*w+j] >= t[i*w+j+1]):
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	return ops
}

// hunks groups changes with diffContext lines around them.
func hunks(ops []diffOp) []string {
	var out []string
	for start := 0; start < len(ops); {
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		lo := max(first-diffContext, 0)
		end := first // extend while the next change is within 2·context
		for k := first; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k
			} else if k-end > 2*diffContext {
				break
			}
		}
		hi := min(end+diffContext+1, len(ops))
		out = append(out, renderHunk(ops, lo, hi))
		start = hi
	}
	return out
}

func renderHunk(ops []diffOp, lo, hi int) string {
	aLine, bLine := 1, 1
	for _, op := range ops[:lo] {
		if op.kind != '+' {
			aLine++
		}
		if op.kind != '-' {
			bLine++
		}
	}
	var body strings.Builder
	aN, bN := 0, 0
	for _, op := range ops[lo:hi] {
		if op.kind != '+' {
			aN++
		}
		if op.kind != '-' {
			bN++
		}
		body.WriteByte(op.kind)
		body.WriteString(op.line)
		if !strings.HasSuffix(op.line, "\n") {
			body.WriteByte('\n')
		}
	}
	if aN == 0 {
		aLine--
	}
	if bN == 0 {
		bLine--
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@\n%s", aLine, aN, bLine, bN, body.String())
}

// capLines cuts s at a line boundary below limit and says how much is left.
func capLines(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := strings.LastIndexByte(s[:limit-60], '\n') + 1
	rest := strings.Count(s[cut:], "\n")
	return s[:cut] + fmt.Sprintf("… [preview cut: %d more lines]\n", rest)
}
