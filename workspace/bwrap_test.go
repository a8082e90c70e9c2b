package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBwrapPlanModeIsReadOnly(t *testing.T) {
	w := newWS(t, "bwrap")
	if w.Level() != LevelBwrap {
		t.Fatalf("level %s", w.Level())
	}
	writeHostFile(t, filepath.Join(w.Dir(), "existing.txt"), "keep\n")
	tests := []struct {
		name, cmd string
		readOnly  bool
		ok        bool
	}{
		{"plan create", "echo x > f", true, false},
		{"plan delete", "rm existing.txt", true, false},
		{"plan anything readable runs", "cat existing.txt && ls -la | wc -l", true, true},
		{"exec create", "echo x > f", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustBash(t, w, tc.cmd, BashOptions{ReadOnly: tc.readOnly})
			if (r.ExitCode == 0) != tc.ok {
				t.Fatalf("%q in plan=%v: %+v", tc.cmd, tc.readOnly, r)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir(), "f")); err != nil || string(b) != "x\n" {
		t.Errorf("exec mode file: %q, %v", b, err)
	}
	if !fileExists(filepath.Join(w.Dir(), "existing.txt")) {
		t.Error("plan mode deleted a file")
	}
}

func TestBwrapNoNetwork(t *testing.T) {
	port := discardPort(t)
	cmd := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	for _, tc := range []struct {
		sandbox   string
		connected bool
	}{{"none", true}, {"bwrap", false}} { // none is the control: the listener works
		t.Run(tc.sandbox, func(t *testing.T) {
			r := mustBash(t, newWS(t, tc.sandbox), cmd, BashOptions{})
			if got := strings.Contains(r.Output, "connected") && r.ExitCode == 0; got != tc.connected {
				t.Fatalf("connected=%v, want %v: %+v", got, tc.connected, r)
			}
		})
	}
}

func TestBwrapPrivateTmp(t *testing.T) {
	host, err := os.CreateTemp("/tmp", "h9-host-visible-")
	if err != nil {
		t.Fatal(err)
	}
	host.Close()
	defer os.Remove(host.Name())
	w := newWS(t, "bwrap")
	name := filepath.Base(host.Name())
	r := mustBash(t, w, "test -e /tmp/"+name+" && echo visible; echo inside > /tmp/"+name+"-in && cat /tmp/"+name+"-in", BashOptions{})
	if strings.Contains(r.Output, "visible") || !strings.Contains(r.Output, "inside") {
		t.Fatalf("sandbox /tmp not private: %+v", r)
	}
	if fileExists("/tmp/" + name + "-in") {
		os.Remove("/tmp/" + name + "-in")
		t.Error("a file written to the sandbox /tmp appeared on the host")
	}
}

func TestBwrapCannotReadBotEnviron(t *testing.T) {
	const secret = "xoxb-proc-environ-secret-99"
	t.Setenv("SLACK_BOT_TOKEN", secret)
	w := newWS(t, "bwrap")
	cmd := fmt.Sprintf("cat /proc/%d/environ; cat /proc/*/environ; ls /proc", os.Getpid())
	r := mustBash(t, w, cmd, BashOptions{})
	if strings.Contains(r.Output, secret) {
		t.Fatalf("bot environment readable inside the sandbox:\n%s", r.Output)
	}
}

func TestBwrapRootIsReadOnly(t *testing.T) {
	w := newWS(t, "bwrap")
	outside := filepath.Join(filepath.Dir(w.Dir()), "escaped.txt")
	r := mustBash(t, w, "echo x > "+outside+"; echo y > /etc/h9-bwrap-probe", BashOptions{})
	if fileExists(outside) || fileExists("/etc/h9-bwrap-probe") {
		os.Remove("/etc/h9-bwrap-probe")
		t.Fatalf("sandbox wrote outside the workspace: %+v", r)
	}
}
