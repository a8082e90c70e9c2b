package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// share_file uploads a workspace file into the session's thread through
// Slack's external upload flow, titled as asked; a path outside the workspace is a tool error the model reads.
func TestShareFileUploadsIntoTheThread(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		fakemodel.ToolCall("write_file", `{"path":"report.txt","content":"ok 12 tests"}`),
		fakemodel.ToolCall("share_file", `{"path":"report.txt","title":"Test report"}`),
		fakemodel.ToolCall("share_file", `{"path":"../../etc/passwd"}`),
		fakemodel.Text("shared the report"),
	)
	thread := e.startSession("run", "run the tests and show me")
	e.waitMessage(thread, "shared the report", 1)
	files := e.slack.Files(testChannel)
	if len(files) != 1 {
		t.Fatalf("files shared = %+v, want the report only", files)
	}
	f := files[0]
	if f.Name != "report.txt" || f.Title != "Test report" || f.ThreadTS != thread || string(f.Content) != "ok 12 tests" {
		t.Errorf("shared %+v (content %q), want report.txt titled \"Test report\" in the thread", f, f.Content)
	}
	var results []string
	for _, m := range e.model.Requests()[3].Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[1], "shared report.txt") || !strings.Contains(results[2], "Error:") ||
		!strings.Contains(results[2], "outside the workspace") {
		t.Errorf("tool results = %q, want the share confirmed and the escape refused", results)
	}
}
