package readonly

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Check reports whether a bash command is provably read-only, by
// parsing it with a real shell parser and accepting only an allowlist of
// commands, arguments and redirections whose values are known before the
// command runs. Without bwrap it stands in front of plan mode's kernel
// guarantee (Landlock) as a second layer, and is the only one where the
// kernel has no Landlock. The error wraps ErrReadOnly and names the part
// that was refused.
func Check(command string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return fmt.Errorf("%w: the command could not be parsed (%v); only simple read-only commands can run while planning", ErrReadOnly, err)
	}
	c := &checker{src: command, loopVars: map[string][]string{}}
	if err := c.stmts(f.Stmts); err != nil {
		return fmt.Errorf("%w: %v. Only read-only commands (ls, cat, grep, rg, find, head, tail, wc, git status/log/diff/show, …) may run while planning", ErrReadOnly, err)
	}
	return nil
}

type checker struct {
	src string
	// loopVars maps each variable bound by `for name in <static words>` to
	// every value it can take.
	loopVars map[string][]string
}

// refuse names the offending source text.
func (c *checker) refuse(n syntax.Node, why string) error {
	return fmt.Errorf("refused %q: %s", c.text(n), why)
}

func (c *checker) text(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(c.src) || s >= e {
		return "?"
	}
	t := c.src[s:e]
	if len(t) > 80 {
		t = t[:77] + "..."
	}
	return t
}

func (c *checker) stmts(list []*syntax.Stmt) error {
	for _, s := range list {
		if err := c.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) stmt(s *syntax.Stmt) error {
	if s.Background || s.Coprocess || s.Disown {
		return c.refuse(s, "background jobs are not allowed")
	}
	for _, r := range s.Redirs {
		if err := c.redirect(r); err != nil {
			return err
		}
	}
	if s.Cmd == nil {
		return nil
	}
	return c.command(s.Cmd)
}

// redirect allows reading files, here-docs, fd duplication (2>&1) and
// discarding output to /dev/null. Anything else could write a file, and
// bash's /dev/tcp and /dev/udp open network connections even for reading.
func (c *checker) redirect(r *syntax.Redirect) error {
	if r.N != nil && !isDigits(r.N.Value) {
		return c.refuse(r, "named file descriptors are not allowed")
	}
	var v string
	var err error
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc != nil {
			_, err = c.word(r.Hdoc)
		}
		return err
	case syntax.RdrIn, syntax.WordHdoc, syntax.DplIn, syntax.DplOut,
		syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		if v, err = c.word(r.Word); err != nil {
			return err
		}
	default:
		return c.refuse(r, "this redirection is not allowed")
	}
	if r.Op == syntax.WordHdoc {
		return nil
	}
	if why := specialPath(v); why != "" {
		return c.refuse(r, why)
	}
	switch r.Op {
	case syntax.RdrIn:
		return nil
	case syntax.DplIn, syntax.DplOut:
		if v == "-" || isDigits(v) || (v == "/dev/null" && r.Op == syntax.DplOut) {
			return nil
		}
	default:
		if v == "/dev/null" {
			return nil
		}
	}
	return c.refuse(r, "redirection to a file")
}

// harmlessDevices may be redirected from or to; other /dev paths are
// refused, /dev/tcp and /dev/udp above all.
var harmlessDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/random": true, "/dev/urandom": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
}

// harmlessProc are the /proc entries a command may name; the rest (other
// processes' environ and mem above all) are refused.
var harmlessProc = map[string]bool{
	"cpuinfo": true, "meminfo": true, "version": true, "loadavg": true, "uptime": true,
	"stat": true, "filesystems": true, "mounts": true, "swaps": true, "self": true, "thread-self": true,
}

// specialPath explains why a word naming a device or a /proc entry is
// refused, or returns "".
func specialPath(v string) string {
	if !strings.HasPrefix(v, "/") {
		return ""
	}
	p := path.Clean(v)
	switch {
	case strings.HasPrefix(p, "/dev/") && !harmlessDevices[p]:
		return "device files other than /dev/null, /dev/zero and /dev/urandom are not allowed (/dev/tcp would open a connection)"
	case strings.HasPrefix(p, "/proc/"):
		first, _, _ := strings.Cut(strings.TrimPrefix(p, "/proc/"), "/")
		if !harmlessProc[first] {
			return "other processes' /proc entries are not allowed"
		}
	}
	return ""
}

func (c *checker) command(cmd syntax.Command) error {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		return c.call(x)
	case *syntax.BinaryCmd:
		if err := c.stmt(x.X); err != nil {
			return err
		}
		return c.stmt(x.Y)
	case *syntax.Subshell:
		return c.stmts(x.Stmts)
	case *syntax.Block:
		return c.stmts(x.Stmts)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			if err := c.stmts(x.Cond); err != nil {
				return err
			}
			if err := c.stmts(x.Then); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		if err := c.stmts(x.Cond); err != nil {
			return err
		}
		return c.stmts(x.Do)
	case *syntax.ForClause:
		return c.forLoop(x)
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return nil
		}
		return c.stmt(x.Stmt)
	default:
		return c.refuse(cmd, "this kind of shell construct is not allowed")
	}
}

// call checks a simple command: no variable assignments (FOO=x cmd can make
// a harmless program run another one, e.g. GIT_EXTERNAL_DIFF), words whose
// values are known, and the command's own rules, for every value its loop
// variables can take.
func (c *checker) call(x *syntax.CallExpr) error {
	if len(x.Assigns) > 0 {
		return c.refuse(x, "variable assignments are not allowed")
	}
	args := make([]string, len(x.Args))
	for i, w := range x.Args {
		v, err := c.word(w)
		if err != nil {
			return err
		}
		if why := specialPath(v); why != "" {
			return c.refuse(w, why)
		}
		args[i] = v
	}
	return c.eachBinding(args, func(concrete []string) error {
		if why := checkArgs(concrete); why != "" {
			return c.refuse(x, why)
		}
		return nil
	})
}

// ErrReadOnly: the command could change something, or the checker cannot
// prove that it does not. workspace.ErrReadOnly is this same value.
var ErrReadOnly = errors.New("plan mode is read-only")
