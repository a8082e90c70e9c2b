package workspace

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// A stdio process speaks over its pipes in the sandbox, and Stop leaves
// nothing behind: not even a child that ignores its stdin closing.
func TestStdioProcessPipesAndStop(t *testing.T) {
	testenv.Need(t, "bwrap")
	checkStdioPipesAndStop(t, newManager(t, "bwrap"))
}

// In the Landlock execution mode (H9_SANDBOX=landlock, or auto without
// bwrap) a stdio process runs under the launcher like any command there:
// confined, and its whole tree gone after Stop.
func TestStdioProcessInLandlockMode(t *testing.T) {
	m := newLandlockManager(t)
	checkStdioPipesAndStop(t, m)
	ws := openWS(t, m, "confined")
	p, err := ws.StartStdio(`while read l; do echo x > /etc/h9-stdio-probe 2>/dev/null && echo WROTE || echo refused; done`, StdioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	io.WriteString(p.Stdin, "go\n")
	if line, err := bufio.NewReader(p.Stdout).ReadString('\n'); err != nil || line != "refused\n" {
		t.Errorf("a stdio process wrote outside its session: %q, %v", line, err)
	}
}

// With H9_SANDBOX=none a stdio process runs under the launcher as a
// command there does, which still leaves nothing behind after Stop.
func TestStdioProcessUnsandboxed(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	checkStdioPipesAndStop(t, newManager(t, "none"))
}

func checkStdioPipesAndStop(t *testing.T, m *Manager) {
	t.Helper()
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
	// The reply can come before the background child has exec'd.
	for deadline := time.Now().Add(10 * time.Second); countCmdline(marker) != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the background child is not running")
		}
	}
	p.Stop()
	if n := countCmdline(marker); n != 0 {
		t.Errorf("%d processes left after Stop", n)
	}
	if !strings.Contains(p.Stderr(), "started") {
		t.Errorf("stderr %q", p.Stderr())
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
