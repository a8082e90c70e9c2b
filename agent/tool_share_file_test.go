package agent

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

type shared struct{ name, title, content string }

// share_file is offered in plan mode (it only reads), uploads a regular
// file through the caller's sharer with its base name and title (default
// the name), and is a tool error for a FIFO, a device, a path outside the
// workspace, a file over 20 MiB, or when the caller gave no sharer; a
// successful share is work the evidence counts.
func TestShareFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setMode("s", planning.PlanModePlan)
	ws := h.wsDir("s")
	writeFile(t, filepath.Join(ws, "out", "report.html"), "<p>ok</p>")
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(ws, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(shareFileMax + 1)
	big.Close()
	var got []shared
	share := func(_ context.Context, name, title string, r io.Reader, size int64) error {
		b, err := io.ReadAll(r)
		if int64(len(b)) != size {
			t.Errorf("sharer read %d bytes of %d", len(b), size)
		}
		got = append(got, shared{name, title, string(b)})
		return err
	}
	h.srv.Enqueue(
		fakemodel.ToolCalls(
			fakemodel.C(shareFileName, `{"path":"out/report.html","title":"Report"}`),
			fakemodel.C(shareFileName, `{"path":"out/report.html"}`),
			fakemodel.C(shareFileName, `{"path":"pipe"}`),
			fakemodel.C(shareFileName, `{"path":"/dev/zero"}`),
			fakemodel.C(shareFileName, `{"path":"../x"}`),
			fakemodel.C(shareFileName, `{"path":"big.bin"}`),
		),
		fakemodel.Text("done"),
	)
	if _, _, err := h.run("s", "show the report", RunOptions{Share: share}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(toolNames(h.lastRequest()), shareFileName) {
		t.Errorf("plan mode does not offer %s: %v", shareFileName, toolNames(h.lastRequest()))
	}
	want := []shared{{"report.html", "Report", "<p>ok</p>"}, {"report.html", "report.html", "<p>ok</p>"}}
	if !slices.Equal(got, want) {
		t.Errorf("shared %+v, want %+v", got, want)
	}
	results := toolMessages(h.lastRequest())
	for i, frag := range []string{"shared report.html", "shared report.html", "FIFO", "outside the workspace", "outside the workspace", "at most 20.0 MiB"} {
		if i >= len(results) || !strings.Contains(results[i].Content, frag) {
			t.Errorf("result %d = %q, want it to say %q", i, results[i].Content, frag)
		}
	}

	h.srv.Enqueue(fakemodel.ToolCall(shareFileName, `{"path":"out/report.html"}`), fakemodel.Text("done"))
	h.mustRun("s", "again, without a sharer")
	if r := toolMessages(h.lastRequest()); !strings.Contains(r[len(r)-1].Content, "Error: files cannot be shared") {
		t.Errorf("without a sharer: %q", r[len(r)-1].Content)
	}
}
