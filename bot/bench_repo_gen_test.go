package bot

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// benchRepoShape is the repository BenchmarkRepoSessionStart works on: the
// issue's size with H9_BENCH_REPO=full (10,000 files, about 200 MB of
// history), else a small one so CI's one-iteration smoke stays fast.
type benchRepoShape struct {
	files   int // files in the tree
	commits int // commits after the first
	edits   int // small files edited by each commit
	blobKiB int // a generated asset rewritten by each commit (incompressible)
}

func benchShape() benchRepoShape {
	if os.Getenv("H9_BENCH_REPO") == "full" {
		return benchRepoShape{files: 10000, commits: 270, edits: 20, blobKiB: 1024}
	}
	return benchRepoShape{files: 300, commits: 5, edits: 5, blobKiB: 64}
}

func (s benchRepoShape) name() string {
	return fmt.Sprintf("h9-bench-repo-v1-%d-%d-%d-%d", s.files, s.commits, s.edits, s.blobKiB)
}

// benchRemote is a bare repository of the shape, made once with git
// fast-import and kept under the temp directory between runs (the full
// size takes a while to make).
func benchRemote(tb testing.TB, s benchRepoShape) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), s.name())
	bare := filepath.Join(dir, "remote.git")
	if _, err := os.Stat(filepath.Join(bare, "h9-complete")); err == nil {
		return bare
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	runGit(tb, dir, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	cmd := exec.Command("git", "-C", bare, "fast-import", "--quiet")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	s.write(w)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("fast-import: %v", err)
	}
	os.WriteFile(filepath.Join(bare, "h9-complete"), nil, 0o644)
	return bare
}

// write is the fast-import stream: a first commit with every file (about
// a kilobyte of code-like text each, in 100 directories), then commits
// that edit a few files and rewrite a generated asset.
func (s benchRepoShape) write(w io.Writer) {
	rng := rand.New(rand.NewPCG(1, 2))
	mark := 0
	blob := func(data []byte) int {
		mark++
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, len(data))
		w.Write(data)
		io.WriteString(w, "\n")
		return mark
	}
	path := func(i int) string { return fmt.Sprintf("pkg%02d/sub%d/file_%05d.go", i%100, (i/100)%4, i) }
	source := func(i, version int) []byte {
		b := []byte("package pkg" + strconv.Itoa(i%100) + "\n\n")
		for l := 0; l < 20+version; l++ {
			b = fmt.Appendf(b, "func f%d_%d(x int) int { return x*%d + %d }\n", i, l, rng.IntN(1000), l)
		}
		return b
	}
	commit := func(n int, files map[string]int) {
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 10\ncommit %03d\n", 1700000000+n, n%1000)
		for p, m := range files {
			fmt.Fprintf(w, "M 100644 :%d %s\n", m, p)
		}
		io.WriteString(w, "\n")
	}
	first := map[string]int{}
	for i := 0; i < s.files; i++ {
		first[path(i)] = blob(source(i, 0))
	}
	commit(0, first)
	raw := make([]byte, s.blobKiB*768)
	for c := 1; c <= s.commits; c++ {
		files := map[string]int{}
		for e := 0; e < s.edits; e++ {
			i := rng.IntN(s.files)
			files[path(i)] = blob(source(i, c))
		}
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		files["assets/generated.b64"] = blob([]byte(base64.StdEncoding.EncodeToString(raw)))
		commit(c, files)
	}
}
