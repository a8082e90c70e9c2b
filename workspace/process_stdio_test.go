package workspace

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// A stdio process speaks over its pipes in the sandbox, and Stop leaves
// nothing behind: not even a child that ignores its stdin closing.
func TestStdioProcessPipesAndStop(t *testing.T) {
	needBwrap(t)
	m := newManager(t, "bwrap")
	ws, err := m.Open("stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	marker := fmt.Sprintf("h9-stdio-marker-%d", os.Getpid())
	p, err := ws.StartStdio("(exec -a "+marker+" sleep 1000) & echo started >&2; while read l; do echo \"got $l in $PWD\"; done", StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(p.Stdin, "ping\n")
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil || line != "got ping in "+ws.Dir()+"\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	if countCmdline(marker) != 1 {
		t.Fatalf("the background child is not running")
	}
	p.Stop()
	if n := countCmdline(marker); n != 0 {
		t.Errorf("%d processes left after Stop", n)
	}
	if !strings.Contains(p.Stderr(), "started") {
		t.Errorf("stderr %q", p.Stderr())
	}
}

func TestStdioProcessNeedsBwrap(t *testing.T) {
	m := newManager(t, "none")
	ws, err := m.Open("stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := ws.StartStdio("cat", StdioOptions{}); err != ErrStdioNeedsBwrap {
		t.Fatalf("err = %v", err)
	}
}

func countCmdline(marker string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.HasPrefix(string(b), marker) {
			n++
		}
	}
	return n
}
