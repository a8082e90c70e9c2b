package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/h9-app/h9"

// layers ranks every package of the module: a package may import only
// packages of a strictly lower rank (ARCHITECTURE.md, "Packages and their
// imports"). The longest matching prefix decides; a package no prefix
// matches fails the test, so a new package is placed on purpose.
var layers = []struct {
	prefix string
	rank   int
}{
	{"planning", 0},
	{"workspace/textcut", 0},
	{"workspace/netx", 0},
	{"workspace/testenv", 0},
	{"workspace/readonly", 0},
	{"workspace/forge", 1},
	{"workspace/forge/fakegit", 0},   // git over HTTP for the fakes below
	{"workspace/forge/fakegitea", 1}, // a fake: tests only
	{"workspace/forge/fakegitlab", 1},
	{"workspace/forge/forgetest", 2},
	{"workspace/egress", 0},
	{"workspace", 1},
	{"workspace/gitrepo", 2},
	{"agent/store", 1},
	{"agent/store/boltstore", 2},
	{"agent/store/pgstore", 2},
	{"agent/store/pgtest", 0},
	{"agent/store/storetest", 2},
	{"agent/openai", 1},
	{"agent/mcp", 2},
	{"agent", 3},
	{"bot/render", 1},
	{"bot/slackapi", 2},
	{"bot/automation", 2},
	{"bot/follow", 3},
	{"bot", 4},
	// Test support, imported only by tests (checked below): it starts the
	// fakes for bot's tests, so it stands beside bot, never above it.
	{"bot/h9test", 4},
	{"cmd", 5},
}

// testSupport packages start the fakes for tests: they may import a fake,
// and only a _test.go file may import them.
var testSupport = []string{"bot/h9test"}

func isTestSupport(pkg string) bool {
	for _, p := range testSupport {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// fakes stand at the process boundary of tests: they may use h9's shared
// vocabulary (a forge's types), never its behaviour.
func isFake(pkg string) bool { return strings.HasPrefix(filepath.Base(pkg), "fake") }

// banned lists external imports a layer must never have: the agent does
// not know Slack, the bot does not know the model's wire, planning is the
// standard library alone.
var banned = []struct{ prefix, imp string }{
	{"agent", "github.com/slack-go/"},
	{"workspace", "github.com/slack-go/"},
	{"planning", "github.com/slack-go/"},
	{"bot", "github.com/sashabaranov/go-openai"},
	{"workspace", "github.com/sashabaranov/go-openai"},
	{"planning", "github.com/sashabaranov/go-openai"},
}

func rankOf(pkg string) (int, bool) {
	best, rank := -1, 0
	for _, l := range layers {
		if (pkg == l.prefix || strings.HasPrefix(pkg, l.prefix+"/")) && len(l.prefix) > best {
			best, rank = len(l.prefix), l.rank
		}
	}
	return rank, best >= 0
}

// TestImportsFlowOneWay parses every non-test file of the module and
// checks its imports against the layers.
func TestImportsFlowOneWay(t *testing.T) {
	imports := moduleImports(t, "../..")
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		rank, ok := rankOf(pkg)
		if !ok {
			t.Errorf("package %s has no layer: add it to layers (and to ARCHITECTURE.md)", pkg)
			continue
		}
		if isFake(pkg) {
			rank = 1
		}
		for imp := range imports[pkg] {
			checkImport(t, pkg, rank, imp)
		}
	}
}

func checkImport(t *testing.T, pkg string, rank int, imp string) {
	t.Helper()
	if strings.HasPrefix(imp, modulePath+"/") {
		dep := strings.TrimPrefix(imp, modulePath+"/")
		depRank, ok := rankOf(dep)
		if isFake(dep) && !isFake(pkg) && !strings.HasPrefix(pkg, "cmd") && !isTestSupport(pkg) {
			t.Errorf("%s imports the test fake %s: fakes are for tests, cmd/h9-demo and other fakes only", pkg, dep)
		}
		if isTestSupport(dep) && !isTestSupport(pkg) {
			t.Errorf("%s imports the test-support package %s: only tests may", pkg, dep)
		}
		if ok && depRank >= rank && !isFake(dep) {
			t.Errorf("%s (layer %d) imports %s (layer %d): imports flow one way, downwards", pkg, rank, dep, depRank)
		}
		return
	}
	if strings.HasPrefix(pkg, "planning") && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
		t.Errorf("planning imports %s: it is the standard library alone", imp)
	}
	for _, b := range banned {
		if (pkg == b.prefix || strings.HasPrefix(pkg, b.prefix+"/")) && strings.HasPrefix(imp, b.imp) {
			t.Errorf("%s imports %s, which its layer must not know", pkg, imp)
		}
	}
}

// moduleImports maps each package directory (relative to the module root)
// to the imports of its non-test files.
func moduleImports(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, im := range f.Imports {
			out[rel][strings.Trim(im.Path.Value, `"`)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d packages under %s: is the module root right?", len(out), root)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
	return out
}
