package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/h9-app/h9"

// layer is one row of ARCHITECTURE.md's table of packages: a package may
// import only packages of a strictly lower layer, and a package of the h9
// side never a package of the test side (ARCHITECTURE.md, "Packages and
// their imports").
type layer struct {
	rank int
	test bool // the test side: fakes, test support, the demo
	line int  // the row's line in ARCHITECTURE.md
}

// layersHeading is the section of ARCHITECTURE.md whose table is read.
const layersHeading = "Packages and their imports"

// layerRow is a row of that table: | layer | `package` | side | what |.
var layerRow = regexp.MustCompile("^\\| ([0-9]+) \\| `([^`]+)` \\| (h9|test) \\|")

// readLayers parses ARCHITECTURE.md's table of packages: one row per
// package, nothing else decides a package's layer.
func readLayers(t *testing.T) map[string]layer {
	t.Helper()
	d := readDoc(t, "ARCHITECTURE.md")
	if !d.hasHeading(layersHeading) {
		t.Fatalf("ARCHITECTURE.md has no section %q: the layers are read from its table", layersHeading)
	}
	out := map[string]layer{}
	in := false
	for _, l := range d.prose {
		if h, ok := headingText(l.text); ok {
			in = h == layersHeading
			continue
		}
		if !in || !strings.HasPrefix(l.text, "| ") {
			continue
		}
		m := layerRow.FindStringSubmatch(l.text)
		if m == nil {
			if !strings.HasPrefix(l.text, "| layer ") && !strings.HasPrefix(l.text, "|---") {
				t.Errorf("ARCHITECTURE.md:%d: a row of the layer table must read | N | `package` | h9 or test | what |: %q", l.n, l.text)
			}
			continue
		}
		rank, _ := strconv.Atoi(m[1])
		if prev, dup := out[m[2]]; dup {
			t.Errorf("ARCHITECTURE.md:%d: %s has a second row (the first is line %d)", l.n, m[2], prev.line)
		}
		out[m[2]] = layer{rank: rank, test: m[3] == "test", line: l.n}
	}
	if len(out) < 10 {
		t.Fatalf("read only %d rows from ARCHITECTURE.md's layer table", len(out))
	}
	return out
}

// banned lists external imports a part must never have: the agent does
// not know Slack, the bot does not know the model's wire, planning is the
// standard library alone (ARCHITECTURE.md, "Packages and their imports").
var banned = []struct{ prefix, imp string }{
	{"agent", "github.com/slack-go/"},
	{"workspace", "github.com/slack-go/"},
	{"planning", "github.com/slack-go/"},
	{"bot", "github.com/sashabaranov/go-openai"},
	{"workspace", "github.com/sashabaranov/go-openai"},
	{"planning", "github.com/sashabaranov/go-openai"},
}

// TestLayersTableNamesEveryPackage: the layer table has exactly the
// module's packages, each once.
func TestLayersTableNamesEveryPackage(t *testing.T) {
	t.Parallel()
	layers := readLayers(t)
	pkgs := map[string]bool{}
	for _, p := range modulePackages(t) {
		pkgs[p] = true
		if _, ok := layers[p]; !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md's layer table: give it a layer there, on purpose", p)
		}
	}
	for p, l := range layers {
		if !pkgs[p] {
			t.Errorf("ARCHITECTURE.md:%d gives %s a layer, but the module has no such package", l.line, p)
		}
	}
}

// TestImportsFlowOneWay parses every non-test file of the module and
// checks its imports against the layer table.
func TestImportsFlowOneWay(t *testing.T) {
	t.Parallel()
	layers := readLayers(t)
	imports := moduleImports(t, repoRoot)
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	checked := 0
	for _, pkg := range pkgs {
		l, ok := layers[pkg]
		if !ok {
			continue // TestLayersTableNamesEveryPackage reports it
		}
		for imp := range imports[pkg] {
			checked++
			if p := importProblem(layers, pkg, l, imp); p != "" {
				t.Error(p)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d imports", checked)
	}
}

// importProblem says what is wrong with pkg (of layer l) importing imp, or
// "" if nothing is.
func importProblem(layers map[string]layer, pkg string, l layer, imp string) string {
	if dep, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
		d, ok := layers[dep]
		switch {
		case !ok:
			return fmt.Sprintf("%s imports %s, which has no row in ARCHITECTURE.md's layer table", pkg, dep)
		case d.test && !l.test:
			return fmt.Sprintf("%s imports %s, a package of the test side: only tests, fakes and the demo may", pkg, dep)
		case d.rank >= l.rank:
			return fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports flow one way, downwards", pkg, l.rank, dep, d.rank)
		}
		return ""
	}
	if (pkg == "planning" || strings.HasPrefix(pkg, "planning/")) && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
		return fmt.Sprintf("planning imports %s: it is the standard library alone", imp)
	}
	for _, b := range banned {
		if (pkg == b.prefix || strings.HasPrefix(pkg, b.prefix+"/")) && strings.HasPrefix(imp, b.imp) {
			return fmt.Sprintf("%s imports %s, which its part must not know", pkg, imp)
		}
	}
	return ""
}

// TestLayersCatchAWrongImport: the checks above refuse each kind of wrong
// import, so a check that let everything through would be noticed.
func TestLayersCatchAWrongImport(t *testing.T) {
	t.Parallel()
	layers := map[string]layer{
		"bot":           {rank: 4},
		"agent":         {rank: 3},
		"bot/fakeslack": {rank: 2, test: true},
		"planning":      {rank: 0},
	}
	for _, c := range []struct{ pkg, imp string }{
		{"agent", modulePath + "/bot"},             // upwards
		{"agent", modulePath + "/agent"},           // the same layer
		{"bot", modulePath + "/bot/fakeslack"},     // the test side
		{"bot", modulePath + "/workspace/nowhere"}, // no row
		{"agent", "github.com/slack-go/slack"},     // banned
		{"planning", "golang.org/x/text"},          // not the standard library
	} {
		if importProblem(layers, c.pkg, layers[c.pkg], c.imp) == "" {
			t.Errorf("%s importing %s passed the layer checks", c.pkg, c.imp)
		}
	}
	for _, c := range []struct{ pkg, imp string }{
		{"bot", modulePath + "/agent"},              // downwards
		{"bot/fakeslack", modulePath + "/planning"}, // a fake using h9's vocabulary
		{"agent", "github.com/sashabaranov/go-openai"},
	} {
		if p := importProblem(layers, c.pkg, layers[c.pkg], c.imp); p != "" {
			t.Errorf("refused an allowed import: %s", p)
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
