package render

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

// fuzzStatuses includes one status the rules would refuse, to prove the
// renderer copes with it anyway.
var fuzzStatuses = []planning.TodoStatus{
	planning.TodoPending, planning.TodoInProgress, planning.TodoCompleted, planning.TodoCancelled, "bogus",
}

// fuzzTodos builds n todos (at most planning.MaxTodos) from content; with
// the low bit of seed set, every 8th content is blown up to 10 KB (every
// one would make each exec slow enough to starve the fuzzer).
func fuzzTodos(content string, n uint16, seed uint8) []planning.TodoItem {
	big := content
	if seed&1 == 1 && content != "" {
		big = strings.Repeat(content, 10240/len(content)+1)[:10240]
	}
	todos := make([]planning.TodoItem, int(n)%(planning.MaxTodos+1))
	for i := range todos {
		c := content
		switch {
		case i%8 == 0:
			c = big
		case i%2 == 1 && len(c) > 0:
			c = c[i%len(c):] // also cuts inside runes: invalid UTF-8 on purpose
		}
		todos[i] = planning.TodoItem{ID: string(rune('a' + i%26)), Content: c,
			Status: fuzzStatuses[(int(seed)>>1+i*(int(seed)%7+1))%len(fuzzStatuses)]}
	}
	return todos
}

// fuzzEvidence gives every todo id evidence made of the fuzzed strings.
func fuzzEvidence(tool, target string, seed uint8) map[string]planning.Evidence {
	exit := int(seed) - 128
	e := planning.Evidence{Made: int(seed), Succeeded: 1, Calls: []planning.ToolRun{
		{Tool: tool, Target: target, Failed: seed&16 != 0, Exit: &exit}, {Tool: target, Target: tool}}}
	if seed&32 != 0 {
		e.Checkpoint = &planning.Checkpoint{Commit: target, Added: int(seed), Deleted: -int(seed)}
	}
	out := map[string]planning.Evidence{}
	for i := range 26 {
		out[string(rune('a'+i))] = e
	}
	return out
}

func FuzzRenderChecklist(f *testing.F) {
	f.Add("fix the build", "write a test", "bash: go test ./...", uint16(12), uint8(6))
	f.Add("<!channel>", "<@U123> <!here> <https://evil|click> &amp;", "<!everyone>", uint16(200), uint8(3))
	f.Fuzz(func(t *testing.T, task, content, activity string, n uint16, seed uint8) {
		c := Checklist{
			SessionID: task, Task: task, Mode: planning.PlanMode(int(seed) % 4), State: activity,
			Todos: fuzzTodos(content, n, seed), Activity: activity, Running: seed&2 != 0, Unsandboxed: seed&4 != 0,
			Evidence: fuzzEvidence(activity, content, seed), Spend: Spend{Tokens: int(n) * 997, Cost: float64(seed), Priced: seed&8 != 0},
		}
		m := RenderChecklist(c)
		mustFit(t, m)
		if p := planning.Summarize(c.Todos); !strings.Contains(m.Text, p.String()) {
			t.Fatalf("fallback text %q lacks %q", m.Text, p.String())
		}
		// The checklist emits no markup of its own, so any '<' came from input.
		for _, s := range texts(m) {
			if strings.Contains(s, "<") {
				t.Fatalf("unescaped markup in %q", s)
			}
		}
	})
}

func FuzzDecodeButtonValue(f *testing.F) {
	f.Add("1|0|sess|")
	f.Add("1|3|a%7Cb|step")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeButtonValue(s)
		if err != nil {
			return
		}
		if v.Encode() != s || len(s) > MaxButtonValue || v.SessionID == "" || v.Revision < 0 {
			t.Fatalf("Decode(%q) accepted %+v", s, v)
		}
	})
}

func FuzzButtonValueRoundTrip(f *testing.F) {
	f.Add("sess", 1, "step")
	f.Fuzz(func(t *testing.T, sid string, rev int, step string) {
		v := ButtonValue{SessionID: sid, Revision: rev, StepID: step}
		s := v.Encode()
		if len(s) > MaxButtonValue {
			t.Fatalf("Encode is %d bytes", len(s))
		}
		got, err := DecodeButtonValue(s)
		if (err == nil) != (s != "") || (err == nil && got != v) {
			t.Fatalf("Encode %+v = %q; Decode = %+v, %v", v, s, got, err)
		}
	})
}
