package workspace

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// CheckReadOnly reports whether a bash command is provably read-only, by
// parsing it with a real shell parser and accepting only an allowlist of
// commands, arguments and redirections. It is plan mode's guarantee when no
// sandbox is available (under bwrap the read-only mount is the guarantee and
// this check is not applied). The error wraps ErrReadOnly and names the part
// that was refused.
func CheckReadOnly(command string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return fmt.Errorf("%w: the command could not be parsed (%v); only simple read-only commands can run while planning", ErrReadOnly, err)
	}
	c := &checker{src: command, loopVars: map[string]bool{}}
	if err := c.stmts(f.Stmts); err != nil {
		return fmt.Errorf("%w: %v. Only read-only commands (ls, cat, grep, rg, find, head, tail, wc, git status/log/diff/show, …) may run while planning", ErrReadOnly, err)
	}
	return nil
}

type checker struct {
	src      string
	loopVars map[string]bool // names bound by `for name in <static words>`
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
// discarding output to /dev/null. Anything else could write a file.
func (c *checker) redirect(r *syntax.Redirect) error {
	if r.N != nil && !isDigits(r.N.Value) {
		return c.refuse(r, "named file descriptors are not allowed")
	}
	switch r.Op {
	case syntax.RdrIn, syntax.WordHdoc:
		_, err := c.word(r.Word)
		return err
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return nil
		}
		_, err := c.word(r.Hdoc)
		return err
	case syntax.DplIn, syntax.DplOut:
		v, err := c.word(r.Word)
		if err != nil {
			return err
		}
		if v == "-" || isDigits(v) {
			return nil
		}
		if v == "/dev/null" && r.Op == syntax.DplOut {
			return nil
		}
		return c.refuse(r, "redirection to a file")
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		v, err := c.word(r.Word)
		if err != nil {
			return err
		}
		if v == "/dev/null" {
			return nil
		}
		return c.refuse(r, "redirection to a file")
	default:
		return c.refuse(r, "this redirection is not allowed")
	}
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
		it, ok := x.Loop.(*syntax.WordIter)
		if !ok {
			return c.refuse(x, "only `for name in words` loops are allowed")
		}
		if len(it.Items) == 0 {
			return c.refuse(x, "loops over positional parameters are not allowed")
		}
		for _, w := range it.Items {
			v, err := c.word(w)
			if err != nil {
				return err
			}
			if strings.HasPrefix(v, "-") {
				return c.refuse(w, "loop words starting with '-' are not allowed")
			}
		}
		// The variable only ever holds one of the static words above.
		c.loopVars[it.Name.Value] = true
		return c.stmts(x.Do)
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
// a harmless program run another one, e.g. GIT_EXTERNAL_DIFF), static words
// only, and the command's own rules.
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
		args[i] = v
	}
	if why := checkArgs(args); why != "" {
		return c.refuse(x, why)
	}
	return nil
}

// word returns the value of a word that has no expansions: plain text,
// quotes, globs. Parameter, command, arithmetic and process substitutions
// are refused — their value is unknown until run time.
func (c *checker) word(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if strings.Contains(x.Value, "{") && (strings.Contains(x.Value, ",") || strings.Contains(x.Value, "..")) {
				return "", c.refuse(w, "brace expansion is not allowed (quote the braces)")
			}
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				return "", c.refuse(w, "$'…' escapes are not allowed")
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				switch y := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeDouble(y.Value))
				case *syntax.ParamExp:
					if !c.isLoopVar(y) {
						return "", c.refuse(q, "expansions ($var, $(…), `…`) are not allowed")
					}
					b.WriteString("$" + y.Param.Value)
				default:
					return "", c.refuse(q, "expansions ($var, $(…), `…`) are not allowed")
				}
			}
		case *syntax.ParamExp:
			if !c.isLoopVar(x) {
				return "", c.refuse(p, "expansions ($var, $((…)), …) are not allowed")
			}
			// Kept as "$name": never a command name or an option to the rules.
			b.WriteString("$" + x.Param.Value)
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return "", c.refuse(p, "command substitution is not allowed")
		default:
			return "", c.refuse(p, "expansions ($var, $((…)), …) are not allowed")
		}
	}
	return b.String(), nil
}

// isLoopVar: a plain $name or ${name} of a loop variable.
func (c *checker) isLoopVar(p *syntax.ParamExp) bool {
	return p.Param != nil && c.loopVars[p.Param.Value] && !p.Excl && !p.Length && !p.Width &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil && p.NestedParam == nil
}

// unescape removes bash's unquoted backslashes, so `-\i` is seen as "-i".
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes bash removes inside "…".
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
