package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// The docs are checked against the code they describe, so that what a
// newcomer reads is true (ARCHITECTURE.md, "Tests"): a
// cited heading exists, a path exists, a link lands, a count is the code's,
// every package and every setting is named. Each failure says what to fix
// in the docs; none of these tests reads the network or starts anything.

// repoRoot is the module's root, seen from cmd/h9.
const repoRoot = "../.."

// userDocs are the pages whose paths in backticks must exist: the README,
// docs/ and the pages for those who carry h9 on. BENCHMARKS.md is history
// below its first table and names files as they were then.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no page under docs/: is the repository root right?")
	}
	for i, p := range pages {
		pages[i], _ = filepath.Rel(repoRoot, p)
	}
	return append([]string{"README.md", "ARCHITECTURE.md", "RELIABILITY.md"}, pages...)
}

// allDocs are the pages whose links and citations must resolve.
func allDocs(t *testing.T) []string {
	return append(userDocs(t), "BENCHMARKS.md", "deploy/README.md")
}

// mdDoc is a markdown page: its lines outside fenced code blocks and its
// headings.
type mdDoc struct {
	path     string
	prose    []mdLine // lines outside ``` blocks
	headings []mdLine // heading text, without the #s
	fences   [][]mdLine
}

type mdLine struct {
	n    int
	text string
}

// docCache holds the pages read, for the tests running in parallel.
var docCache = struct {
	sync.Mutex
	pages map[string]*mdDoc
}{pages: map[string]*mdDoc{}}

func readDoc(t *testing.T, rel string) *mdDoc {
	t.Helper()
	docCache.Lock()
	defer docCache.Unlock()
	if d, ok := docCache.pages[rel]; ok {
		return d
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	d := &mdDoc{path: rel}
	var fence []mdLine
	inFence := false
	for i, line := range strings.Split(string(raw), "\n") {
		l := mdLine{i + 1, line}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if inFence {
				d.fences = append(d.fences, fence)
				fence = nil
			}
			inFence = !inFence
			continue
		}
		if inFence {
			fence = append(fence, l)
			continue
		}
		d.prose = append(d.prose, l)
		if h, ok := headingText(line); ok {
			d.headings = append(d.headings, mdLine{l.n, h})
		}
	}
	docCache.pages[rel] = d
	return d
}

func headingText(line string) (string, bool) {
	level := len(line) - len(strings.TrimLeft(line, "#"))
	if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
		return "", false
	}
	return strings.TrimSpace(line[level:]), true
}

func (d *mdDoc) hasHeading(h string) bool {
	return slices.ContainsFunc(d.headings, func(l mdLine) bool { return l.text == h })
}

// anchors are the fragments GitHub gives the page's headings.
func (d *mdDoc) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range d.headings {
		s := slug(h.text)
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, letters, digits, _
// and - kept, spaces made -, everything else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// closest suggests the heading that shares the most words with h.
func (d *mdDoc) closest(h string) string {
	words := strings.Fields(strings.ToLower(h))
	best, bestN := "", 0
	for _, c := range d.headings {
		n := 0
		for _, w := range strings.Fields(strings.ToLower(c.text)) {
			if slices.Contains(words, w) && len(w) > 3 {
				n++
			}
		}
		if n > bestN {
			best, bestN = c.text, n
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// citation is a reference to a section of a page: ARCHITECTURE.md, "Heading"
// (the house's form), also README's "Heading" or ARCHITECTURE.md ("Heading").
var (
	citationQuoted = regexp.MustCompile(`\b(ARCHITECTURE|README|RELIABILITY|BENCHMARKS|docs/[a-z0-9-]+)(?:\.md)?(?:'s)?(?:,?\s+\(?|\s*\()"([^"]+)"`)
	// (README, Network) in text a user reads: a section by its name.
	citationBare = regexp.MustCompile(`\((ARCHITECTURE|README|docs/[a-z0-9-]+)(?:\.md)?, ([A-Z][^()"]*)\)`)
	// docs/network.md named anywhere must exist.
	docsPage = regexp.MustCompile(`\bdocs/[a-z0-9-]+\.md\b`)
)

// checkCitations reports each citation in text that names no heading of
// its page, and each docs/ page named that does not exist.
func checkCitations(t *testing.T, where, text string) {
	t.Helper()
	text = strings.Join(strings.Fields(text), " ")
	for _, re := range []*regexp.Regexp{citationQuoted, citationBare} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			page := m[1] + ".md"
			if _, err := os.Stat(filepath.Join(repoRoot, page)); err != nil {
				t.Errorf("%s cites %s, which does not exist", where, page)
				continue
			}
			d := readDoc(t, page)
			if !d.hasHeading(m[2]) {
				t.Errorf("%s cites %s, %q: %s has no such heading%s", where, page, m[2], page, d.closest(m[2]))
			}
		}
	}
	for _, p := range docsPage.FindAllString(text, -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			t.Errorf("%s names %s, which does not exist", where, p)
		}
	}
}

// TestDocsCitationsNameRealHeadings reads every comment and string of the
// module's Go files, and the docs themselves, for citations of a page's
// section.
func TestDocsCitationsNameRealHeadings(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := 0
	walkGo(t, true, func(path string) {
		if filepath.Base(path) == "docs_test.go" {
			return // this file's patterns and examples are not citations
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files++
		rel, _ := filepath.Rel(repoRoot, path)
		for _, g := range f.Comments {
			checkCitations(t, fmt.Sprintf("%s:%d", rel, fset.Position(g.Pos()).Line), g.Text())
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					s = lit.Value
				}
				checkCitations(t, fmt.Sprintf("%s:%d", rel, fset.Position(lit.Pos()).Line), s)
			}
			return true
		})
	})
	if files < 100 {
		t.Fatalf("read only %d Go files under %s", files, repoRoot)
	}
	for _, page := range allDocs(t) {
		for _, l := range readDoc(t, page).prose {
			// A citation in backticks is an example of the form, not a citation.
			checkCitations(t, fmt.Sprintf("%s:%d", page, l.n), backtickSpan.ReplaceAllString(l.text, ""))
		}
	}
}

// walkGo calls fn with every Go file of the module (tests too if asked),
// leaving out testdata and hidden directories.
func walkGo(t *testing.T, tests bool, fn func(path string)) {
	t.Helper()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && (tests || !strings.HasSuffix(name, "_test.go")) {
			fn(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// notInRepository are the backticked paths the docs name that are not
// files of the repository, each with why.
var notInRepository = []struct{ prefix, why string }{
	{"/", "an absolute path is on the machine h9 runs on or inside the sandbox (/tmp, /proc, /etc/shadow)"},
	{"~/", "a home directory"},
	{"./h9-data", "H9_DATA_DIR's default, made at run time"},
	{"h9-data/", "the data directory, made at run time"},
	{"H9_DATA_DIR/", "inside the data directory, made at run time"},
	{"workspaces/", "inside the data directory, made at run time"},
	{"repos/", "inside the data directory, made at run time"},
	{".h9/", "inside a session's workspace (the user's repository), not h9's"},
	{".git/", "inside a session's checkout"},
	{"./tools/", "an example of a user's own MCP server in their repository"},
	{"testdata/", "named relative to the package whose tests hold it"},
}

// repoPath says whether a backticked span names a file of the repository:
// it starts with a top-level entry of the repository and has no spaces, or
// it is a Go file. A span may hold globs and <placeholders>.
func repoPath(span string, top map[string]bool) (pattern string, ok bool) {
	if span == "" || strings.ContainsAny(span, " \t=") || strings.Contains(span, "://") {
		return "", false
	}
	for _, n := range notInRepository {
		if strings.HasPrefix(span, n.prefix) {
			return "", false
		}
	}
	first, _, _ := strings.Cut(span, "/")
	if !top[first] && !strings.HasSuffix(span, ".go") {
		return "", false
	}
	pattern = regexp.MustCompile(`<[^>]*>|…`).ReplaceAllString(span, "*")
	// workspace/forge/forgetest.Run names a package's identifier.
	pattern = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`).ReplaceAllString(pattern, "")
	return strings.TrimSuffix(pattern, "/"), true
}

var backtickSpan = regexp.MustCompile("`([^`]+)`")

// TestDocsPathsExist: every path in backticks in the README, docs/,
// ARCHITECTURE.md and RELIABILITY.md is a file or directory of the
// repository (a bare Go file name, as a section names the files of the
// package it is about, exists somewhere in the module).
func TestDocsPathsExist(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".git") { // `.git` in the docs is a session's
			top[e.Name()] = true
		}
	}
	goFiles := map[string]bool{}
	walkGo(t, true, func(path string) { goFiles[filepath.Base(path)] = true })
	for _, page := range userDocs(t) {
		for _, l := range readDoc(t, page).prose {
			for _, m := range backtickSpan.FindAllStringSubmatch(l.text, -1) {
				pattern, ok := repoPath(m[1], top)
				if !ok {
					continue
				}
				if !strings.Contains(pattern, "/") && !top[pattern] {
					if !goFilesMatch(goFiles, pattern) {
						t.Errorf("%s:%d names %s: no Go file of the module has that name", page, l.n, m[1])
					}
					continue
				}
				found, err := filepath.Glob(filepath.Join(repoRoot, pattern))
				if err != nil || len(found) == 0 {
					t.Errorf("%s:%d names %s, which is not in the repository", page, l.n, m[1])
				}
			}
		}
	}
}

func goFilesMatch(files map[string]bool, pattern string) bool {
	for f := range files {
		if ok, _ := filepath.Match(pattern, f); ok {
			return true
		}
	}
	return false
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link of the docs leads to a file of
// the repository, and its #fragment to a heading there.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	links := 0
	for _, page := range allDocs(t) {
		for _, l := range readDoc(t, page).prose {
			text := backtickSpan.ReplaceAllString(l.text, "")
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, ":") {
					continue // https:, mailto:
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				rel := page
				if file != "" {
					rel = filepath.Clean(filepath.Join(filepath.Dir(page), file))
				}
				if _, err := os.Stat(filepath.Join(repoRoot, rel)); err != nil {
					t.Errorf("%s:%d links to %s, which is not in the repository", page, l.n, target)
					continue
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s:%d links to #%s of %s, which is not a markdown page", page, l.n, frag, rel)
					continue
				}
				if d := readDoc(t, rel); !d.anchors()[frag] {
					t.Errorf("%s:%d links to %s: %s has no heading with the anchor #%s", page, l.n, target, rel, frag)
				}
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d relative links in the docs: is the link pattern right?", links)
	}
}

// TestDocsStateTableCountMatchesTheCode: the pairs ARCHITECTURE.md and
// RELIABILITY.md count are bot's tableStates × allEvents, counted from
// bot's source as its TestTransitions walks them: allStates plus "new" (a
// thread before its session), and allEvents.
func TestDocsStateTableCountMatchesTheCode(t *testing.T) {
	t.Parallel()
	vars := packageVars(t, filepath.Join(repoRoot, "bot"))
	states := countElems(t, vars, "allStates") + 1
	events := countElems(t, vars, "allEvents")
	pairs := states * events
	want := fmt.Sprintf("%d × %d = %s pairs", states, events, thousands(pairs))
	said := regexp.MustCompile(`(\d+) × (\d+) = ([\d,]+) pairs`)
	found := 0
	for _, page := range []string{"ARCHITECTURE.md", "RELIABILITY.md"} {
		for _, l := range readDoc(t, page).prose {
			for _, m := range said.FindAllString(l.text, -1) {
				if page == "ARCHITECTURE.md" {
					found++
				}
				if m != want {
					t.Errorf("%s:%d says %q; bot's table is %q (allStates and \"new\" × allEvents)", page, l.n, m, want)
				}
			}
		}
	}
	if found == 0 {
		t.Errorf("ARCHITECTURE.md does not say how many pairs the state × event table has (%q)", want)
	}
	count := regexp.MustCompile(`([\d,]+) pairs`)
	for _, page := range []string{"ARCHITECTURE.md", "RELIABILITY.md"} {
		for _, l := range readDoc(t, page).prose {
			for _, m := range count.FindAllStringSubmatch(l.text, -1) {
				if m[1] != thousands(pairs) && strings.Contains(l.text, "allEvents") {
					t.Errorf("%s:%d counts %s pairs; bot's table has %s", page, l.n, m[1], thousands(pairs))
				}
			}
		}
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// packageVars maps the package-level variables of the package in dir
// (its test files too) to their values.
func packageVars(t *testing.T, dir string) map[string]ast.Expr {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	vars := map[string]ast.Expr{}
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						vars[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	return vars
}

// countElems counts the elements of a package-level slice built from
// composite literals, append and slices.Concat.
func countElems(t *testing.T, vars map[string]ast.Expr, name string) int {
	t.Helper()
	e, ok := vars[name]
	if !ok {
		t.Fatalf("bot has no package-level variable %s: the docs' state table count is taken from it", name)
	}
	var count func(ast.Expr) int
	count = func(e ast.Expr) int {
		switch e := e.(type) {
		case *ast.CompositeLit:
			return len(e.Elts)
		case *ast.Ident:
			if v, ok := vars[e.Name]; ok {
				return count(v)
			}
		case *ast.CallExpr:
			fn := ""
			switch f := e.Fun.(type) {
			case *ast.Ident:
				fn = f.Name
			case *ast.SelectorExpr:
				fn = f.Sel.Name
			}
			if fn == "append" || fn == "Concat" {
				n := 0
				for _, a := range e.Args {
					c := count(a)
					if fn == "append" && a != e.Args[0] && !e.Ellipsis.IsValid() {
						c = 1
					}
					n += c
				}
				return n
			}
		}
		t.Fatalf("cannot count %s: %T is neither a slice literal, another variable, append nor slices.Concat", name, e)
		return 0
	}
	return count(e)
}

// TestDocsLayoutNamesEveryPackage: the README's layout table has a row for
// every package of the module, and no row for a package that is gone (its
// rows are paths, so TestDocsPathsExist holds them to the repository).
func TestDocsLayoutNamesEveryPackage(t *testing.T) {
	t.Parallel()
	rows := tableRows(t, readDoc(t, "README.md"), "Layout", regexp.MustCompile("^\\| `([^`]+)` \\|"))
	if len(rows) < 10 {
		t.Fatalf("README.md's Layout section has only %d rows of the form | `path` | what |", len(rows))
	}
	for _, pkg := range modulePackages(t) {
		if !rows[pkg] {
			t.Errorf("package %s has no row in README.md's Layout table: add one saying what it is for", pkg)
		}
	}
}

// tableRows collects the first capture of row from each line of the
// section under heading (up to the next heading), with any trailing /
// dropped.
func tableRows(t *testing.T, d *mdDoc, heading string, row *regexp.Regexp) map[string]bool {
	t.Helper()
	if !d.hasHeading(heading) {
		t.Fatalf("%s has no heading %q", d.path, heading)
	}
	rows := map[string]bool{}
	in := false
	for _, l := range d.prose {
		if h, ok := headingText(l.text); ok {
			in = h == heading
			continue
		}
		if m := row.FindStringSubmatch(l.text); in && m != nil {
			rows[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	return rows
}

// modulePackages lists every directory of the module that holds Go files,
// as go list ./... does (testdata and hidden directories left out).
func modulePackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	walkGo(t, true, func(path string) {
		rel, _ := filepath.Rel(repoRoot, filepath.Dir(path))
		seen[filepath.ToSlash(rel)] = true
	})
	var pkgs []string
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), repoRoot)
	}
	return pkgs
}

// TestDocsConfigurationTableMatchesHelp: docs/configuration.md's table names
// the settings `h9 -h` prints, each with the default `h9 -h` prints.
func TestDocsConfigurationTableMatchesHelp(t *testing.T) {
	clearEnv(t)
	var out, errOut bytes.Buffer
	if code := realMain([]string{"-h"}, &out, &errOut); code != exitOK {
		t.Fatalf("h9 -h: exit %d, stderr %q", code, errOut.String())
	}
	help := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`).MatchString(f[0]) && f[0] != "VARIABLE" {
			help[f[0]] = f[1]
		}
	}
	if len(help) < 40 {
		t.Fatalf("read only %d settings from h9 -h:\n%s", len(help), out.String())
	}
	doc := map[string]string{}
	row := regexp.MustCompile("^\\| `([A-Z][A-Z0-9_]+)` \\| ([^|]*) \\|")
	for _, l := range readDoc(t, "docs/configuration.md").prose {
		m := row.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		if _, dup := doc[m[1]]; dup {
			t.Errorf("docs/configuration.md:%d: %s has a second row", l.n, m[1])
		}
		doc[m[1]] = helpDefault(m[2])
	}
	for name, def := range help {
		got, ok := doc[name]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md has no row for %s (h9 -h: default %s)", name, def)
		case got != def:
			t.Errorf("docs/configuration.md gives %s the default %q; h9 -h says %q", name, got, def)
		}
	}
	for name := range doc {
		if _, ok := help[name]; !ok {
			t.Errorf("docs/configuration.md has a row for %s, which h9 -h does not print", name)
		}
	}
}

// helpDefault turns the table's default column into what h9 -h prints:
// "required", "empty…", or the first value in backticks.
func helpDefault(col string) string {
	col = strings.TrimSpace(col)
	switch {
	case col == "required":
		return "(required)"
	case strings.HasPrefix(col, "empty"):
		return "(empty)"
	}
	if m := backtickSpan.FindStringSubmatch(col); m != nil {
		return m[1]
	}
	return col
}

// testName is a test, benchmark or fuzz target named in the docs; a
// trailing * or … names a family by its prefix.
var testName = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)(\*|…)?`)

// TestDocsTestsNamedExist: every test, benchmark and fuzz target the docs
// name as a guarantee's proof or a budget's measure exists in the module
// (BENCHMARKS.md: its table of budgets; its history names them as they
// were).
func TestDocsTestsNamedExist(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	fset := token.NewFileSet()
	walkGo(t, true, func(path string) {
		if !strings.HasSuffix(path, "_test.go") {
			return
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				defined[fn.Name.Name] = true
			}
		}
	})
	check := func(where, text string) {
		for _, m := range testName.FindAllStringSubmatch(text, -1) {
			if m[2] != "" {
				if !mapHasPrefix(defined, m[1]) {
					t.Errorf("%s names %s%s: no test of the module starts so", where, m[1], m[2])
				}
				continue
			}
			if !defined[m[1]] {
				t.Errorf("%s names %s: no test of the module has that name", where, m[1])
			}
		}
	}
	for _, page := range userDocs(t) {
		d := readDoc(t, page)
		for _, l := range d.prose {
			check(fmt.Sprintf("%s:%d", page, l.n), l.text)
		}
	}
	bench := readDoc(t, "BENCHMARKS.md")
	for _, l := range bench.prose {
		if h, ok := headingText(l.text); ok && h == "History" {
			break
		}
		check(fmt.Sprintf("BENCHMARKS.md:%d", l.n), l.text)
	}
}

func mapHasPrefix(m map[string]bool, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
