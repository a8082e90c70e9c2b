package readonly

import (
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

const (
	// loopMark brackets a loop variable's name inside a word's value; bash
	// strings cannot hold NUL, so it never collides with real text.
	loopMark = "\x00"
	// maxBindings bounds the value combinations one command is checked for.
	maxBindings = 256
)

// loopVarName: lowercase only. bash's special and exported variables are
// uppercase (PATH, IFS, HOME, GIT_CONFIG_*), and binding one in a loop would
// change what later commands run.
var loopVarName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// word returns the value of a word whose value is known before it runs:
// plain text, quotes, safe globs, and loop variables (as loopMark-bracketed
// names, bound later by eachBinding). Other expansions are refused: their
// value is unknown until run time, and bash evaluates even `$(…)` inside
// an arithmetic subscript.
func (c *checker) word(w *syntax.Word) (string, error) {
	if hasBraceExpansion(w) {
		return "", c.refuse(w, "brace expansion is not allowed (quote the braces)")
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(x.Value))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				return "", c.refuse(w, "$'…' escapes are not allowed")
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if err := c.doubleQuoted(x, &b, len(w.Parts) == 1); err != nil {
				return "", err
			}
		case *syntax.ParamExp:
			if err := c.loopVar(x, len(w.Parts) == 1); err != nil {
				return "", err
			}
			b.WriteString(loopMark + x.Param.Value + loopMark)
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return "", c.refuse(p, "command substitution is not allowed")
		default:
			return "", c.refuse(p, "expansions ($var, $((…)), …) are not allowed")
		}
	}
	if startsWithGlob(w) {
		return "", c.refuse(w, "a glob must not start the word: it could expand to a file named like an option (write ./*.go, not *.go)")
	}
	return b.String(), nil
}

func (c *checker) doubleQuoted(x *syntax.DblQuoted, b *strings.Builder, whole bool) error {
	for _, q := range x.Parts {
		switch y := q.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeDouble(y.Value))
		case *syntax.ParamExp:
			if err := c.loopVar(y, whole && len(x.Parts) == 1); err != nil {
				return err
			}
			b.WriteString(loopMark + y.Param.Value + loopMark)
		default:
			return c.refuse(q, "expansions ($var, $(…), `…`) are not allowed")
		}
	}
	return nil
}

// loopVar accepts a plain $name or ${name} of a loop variable. A variable
// whose values are globs is only accepted as a word of its own: inside a
// larger word its file names would mix with other text unchecked.
func (c *checker) loopVar(p *syntax.ParamExp, whole bool) error {
	vals, ok := c.loopVars[paramName(p)]
	if !ok || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil ||
		p.Names != 0 || p.Exp != nil || p.NestedParam != nil {
		return c.refuse(p, "expansions ($var, $((…)), …) are not allowed")
	}
	if !whole {
		for _, v := range vals {
			if strings.ContainsAny(v, "*?[") {
				return c.refuse(p, "a loop variable over a glob must be a word of its own")
			}
		}
	}
	return nil
}

func paramName(p *syntax.ParamExp) string {
	if p.Param == nil {
		return ""
	}
	return p.Param.Value
}

// forLoop binds the loop variable to static words that cannot act as
// options or split into several words when used unquoted.
func (c *checker) forLoop(x *syntax.ForClause) error {
	it, ok := x.Loop.(*syntax.WordIter)
	if !ok || x.Select {
		return c.refuse(x, "only `for name in words` loops are allowed")
	}
	if len(it.Items) == 0 {
		return c.refuse(x, "loops over positional parameters are not allowed")
	}
	if !loopVarName.MatchString(it.Name.Value) {
		return c.refuse(x, "loop variables must be lowercase names (uppercase ones such as PATH or IFS change what runs)")
	}
	var vals []string
	for _, w := range it.Items {
		v, err := c.word(w)
		if err != nil {
			return err
		}
		switch {
		case v == "":
			return c.refuse(w, "loop words must not be empty")
		case strings.Contains(v, loopMark):
			return c.refuse(w, "loop words must not use other variables")
		case strings.HasPrefix(v, "-"):
			return c.refuse(w, "loop words starting with '-' are not allowed")
		case strings.ContainsAny(v, " \t\n"):
			return c.refuse(w, "loop words must not contain blanks (they would split into several words)")
		case specialPath(v) != "":
			return c.refuse(w, specialPath(v))
		}
		vals = append(vals, v)
	}
	// Every value any loop gave the name, so uses after an inner loop are
	// checked against the outer loop's values too.
	c.loopVars[it.Name.Value] = append(c.loopVars[it.Name.Value], vals...)
	return c.stmts(x.Do)
}

// eachBinding calls check with args for every combination of the values of
// the loop variables they use.
func (c *checker) eachBinding(args []string, check func([]string) error) error {
	var names []string
	for _, a := range args {
		parts := strings.Split(a, loopMark)
		for i := 1; i < len(parts); i += 2 {
			if !slices.Contains(names, parts[i]) {
				names = append(names, parts[i])
			}
		}
	}
	combos := 1
	for _, n := range names {
		combos *= len(c.loopVars[n])
		if combos > maxBindings {
			return check([]string{"loop", "with too many combinations of values"})
		}
	}
	for i := range combos {
		concrete := make([]string, len(args))
		for j, a := range args {
			concrete[j] = c.bind(a, names, i)
		}
		if err := check(concrete); err != nil {
			return err
		}
	}
	return nil
}

// bind substitutes the values of combination i (mixed radix over names).
func (c *checker) bind(a string, names []string, i int) string {
	if !strings.Contains(a, loopMark) {
		return a
	}
	for _, n := range names {
		vals := c.loopVars[n]
		a = strings.ReplaceAll(a, loopMark+n+loopMark, vals[i%len(vals)])
		i /= len(vals)
	}
	return a
}

// hasBraceExpansion: bash would expand {a,b} or {1..3} in w, even when the
// braces and commas sit in different (unquoted) parts: -{"delete",x}.
func hasBraceExpansion(w *syntax.Word) bool {
	s := litsFrom(w.Parts)
	if !strings.Contains(s, "{") {
		return false
	}
	if open := strings.Index(s, "{"); strings.Contains(s[open:], "}") &&
		(strings.Contains(s[open:], ",") || strings.Contains(s[open:], "..")) {
		return true
	}
	cp := *w
	cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
	syntax.SplitBraces(&cp)
	return braceParts(cp.Parts)
}

func braceParts(parts []syntax.WordPart) bool {
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		if b.Sequence || len(b.Elems) > 1 {
			return true
		}
		for _, e := range b.Elems {
			if braceParts(e.Parts) {
				return true
			}
		}
	}
	return false
}

// startsWithGlob: the word's value begins with a glob (a '[' only with a
// ']' after it), so its expansion can be any file name, "-delete" included.
// Empty quotes before it ("" *) do not change that.
func startsWithGlob(w *syntax.Word) bool {
	for i, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if x.Value == "" {
				continue
			}
			switch x.Value[0] {
			case '*', '?':
				return true
			case '[':
				return strings.Contains(litsFrom(w.Parts[i:])[1:], "]")
			}
			return false
		case *syntax.SglQuoted:
			if x.Value != "" {
				return false
			}
		case *syntax.DblQuoted:
			if len(x.Parts) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// litsFrom joins the unquoted literal text of parts.
func litsFrom(parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		}
	}
	return b.String()
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
