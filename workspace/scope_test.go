package workspace

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// Without a sandbox an execution-mode command keeps root's capabilities,
// CAP_SYS_PTRACE among them, which would open h9's memory (its tokens) for
// reading. The signal scope's Landlock domain refuses that too: a command
// cannot trace or read the memory of a process outside its domain.
func TestUnsandboxedCommandCannotReadH9Memory(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	if landlockABI() < landlockScopeABI {
		t.Skipf("Landlock ABI %d: no signal scope here", landlockABI())
	}
	w := newWS(t, "none")
	pid := strconv.Itoa(os.Getpid())
	r := mustRun(t, w, "grep -m1 ' r' /proc/"+pid+"/maps | cut -d- -f1 > start; "+
		"dd if=/proc/"+pid+"/mem of=/dev/null bs=1 count=16 skip=$((0x$(cat start))) 2>&1; echo rc=$?", BashOptions{})
	if !strings.Contains(r.Output, "Permission denied") || strings.Contains(r.Output, "rc=0") {
		t.Errorf("an unsandboxed command read h9's memory:\n%s", r.String())
	}
}
