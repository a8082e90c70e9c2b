package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

func TestModelMistakesAreErrorResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply fakemodel.Reply
		want  string
	}{
		{"malformed JSON", fakemodel.BrokenToolCall("write_file"), "not a valid JSON object"},
		{"unknown tool", fakemodel.ToolCall("launch_rockets", `{}`), `unknown tool "launch_rockets"`},
		{"missing required argument", fakemodel.ToolCall("read_file", `{"offset":3}`), `missing required argument "path"`},
		{"null required argument", fakemodel.ToolCall("edit_file", `{"path":"a","old_string":null,"new_string":"b"}`), `"old_string"`},
		{"wrong type", fakemodel.ToolCall("bash", `{"command":42}`), "do not match the schema"},
		{"path outside workspace", fakemodel.ToolCall("read_file", `{"path":"../../../etc/passwd"}`), "outside"},
		{"unknown skill", fakemodel.ToolCall("use_skill", `{"name":"nope"}`), `no skill named "nope"`},
		{"empty arguments", fakemodel.ToolCall("write_file", ``), `missing required argument "path"`},
		{"arguments cut at the output limit", cutCall("write_file"), "reached its output limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tt.reply, fakemodel.Text("sorry"))
			res, rec := h.mustRun("s", "go")
			if res.Text != "sorry" {
				t.Errorf("run did not continue after the mistake: %q", res.Text)
			}
			got := toolMessages(h.lastRequest())
			if len(got) != 1 || !strings.HasPrefix(got[0].Content, "Error: ") || !strings.Contains(got[0].Content, tt.want) {
				t.Errorf("tool result = %+v, want an error containing %q", got, tt.want)
			}
			if fin := rec.of(EventToolFinished); len(fin) != 1 || !fin[0].IsError {
				t.Errorf("finished events = %+v", fin)
			}
		})
	}
}

func TestToolOutputIsCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"head -c 200000 /dev/zero | tr '\\0' 'x'"}`), fakemodel.Text("ok"))
	_, rec := h.mustRun("s", "go")
	out := toolMessages(h.lastRequest())[0].Content
	if len(out) > maxToolOutput+200 {
		t.Errorf("tool output sent to the model is %d bytes, cap is %d", len(out), maxToolOutput)
	}
	if fin := rec.of(EventToolFinished)[0]; len([]rune(fin.Output)) > eventOutputLimit {
		t.Errorf("event output is %d runes", len([]rune(fin.Output)))
	}
}

func TestCapOutputKeepsHeadAndTailValidUTF8(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", maxToolOutput) // 2 bytes each: both cuts may split a rune
	got := capOutput("HEAD" + s + "TAIL")
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "bytes omitted") {
		t.Errorf("capOutput lost the head, the tail or the note")
	}
	if !strings.Contains(got, "é\n[...") || strings.ToValidUTF8(got, "?") != got {
		t.Errorf("capOutput produced invalid UTF-8")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSystemPromptSkillsAndAgentsMD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.wsDir("s")
	writeFile(t, filepath.Join(h.cfg.SkillsDir, "deploy", "SKILL.md"),
		"---\nname: deploy\ndescription: |\n  Ship the service\n  to staging.\n---\nRun make deploy, then check /healthz.\n")
	writeFile(t, filepath.Join(ws, ".h9", "skills", "lint", "SKILL.md"),
		"---\nname: lint\ndescription: Lint Go code.\n---\n\nRun go vet ./...\n")
	writeFile(t, filepath.Join(ws, ".h9", "skills", "broken", "SKILL.md"), "no front matter")
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "Always run gofmt.\n")
	// A symlinked skill must not leak a host file.
	if err := os.MkdirAll(filepath.Join(ws, ".h9", "skills", "leak"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(ws, ".h9", "skills", "leak", "SKILL.md")); err != nil {
		t.Fatal(err)
	}

	h.srv.Enqueue(fakemodel.ToolCall("use_skill", `{"name":"deploy"}`), fakemodel.Text("ok"))
	h.mustRun("s", "deploy it")
	req := h.lastRequest()
	sys := req.Messages[0].Content
	for _, want := range []string{"h9", ws, "Mode: default", "Sandbox: none", "- deploy: Ship the service to staging.", "- lint: Lint Go code.", "Always run gofmt."} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "broken") || strings.Contains(sys, "leak") {
		t.Errorf("system prompt lists a malformed or escaping skill:\n%s", sys)
	}
	if got := toolMessages(req)[0].Content; got != "Run make deploy, then check /healthz." {
		t.Errorf("use_skill returned %q", got)
	}
}

// A read_file page must reach the model whole: cutting its middle would hide
// lines that the page's "offset=N to read more" note then skips.
func TestReadFilePageFitsToolOutputCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	writeFile(t, filepath.Join(h.wsDir("s"), "big.txt"), strings.Repeat(strings.Repeat("x", 60)+"\n", 2000))
	h.srv.Enqueue(fakemodel.ToolCall("read_file", `{"path":"big.txt"}`), fakemodel.Text("ok"))
	h.mustRun("s", "go")
	out := toolMessages(h.lastRequest())[0].Content
	if strings.Contains(out, "bytes omitted") || !strings.Contains(out, "to read more") {
		t.Errorf("read_file page was cut by the tool output cap (%d bytes): ...%s", len(out), out[len(out)-200:])
	}
}

// Long bash output is cut once, by the workspace, whose note says how much
// was cut; the tool output cap must not cut it again and lose that note.
func TestBashOutputCutOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"head -c 200000 /dev/zero | tr '\\0' 'x'"}`), fakemodel.Text("ok"))
	h.mustRun("s", "go")
	out := toolMessages(h.lastRequest())[0].Content
	if strings.Contains(out, "bytes omitted") || !strings.Contains(out, "bytes of output cut") || !strings.HasSuffix(out, "[exit code 0]") {
		t.Errorf("bash output was cut twice or lost its notes (%d bytes)", len(out))
	}
}

// cutCall is a call whose arguments the output limit cut off.
func cutCall(name string) fakemodel.Reply {
	r := fakemodel.BrokenToolCall(name)
	r.FinishReason = "length"
	return r
}
