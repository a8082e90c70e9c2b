package planning

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plainLog is WorkLog without its MarshalJSON: what encoding/json writes.
type plainLog struct {
	Since   Evidence             `json:"since"`
	Working map[string]*Evidence `json:"working,omitempty"`
	Done    map[string]*Evidence `json:"done,omitempty"`
}

// The hand-written encoding is byte for byte encoding/json's, and reads
// back as the log it came from, whatever the strings hold.
func FuzzWorkLogJSON(f *testing.F) {
	f.Add("bash", "go test ./... && echo \"<ok>\" & \u2028", "a1b2c3d", 3, true)
	f.Add("", "", "", 0, false)
	f.Add("write_file", "\x00\x1f\b\f\t\r\n\\\xff\xfe日本", "\u2029", -7, true)
	f.Fuzz(func(t *testing.T, tool, target, commit string, n int, failed bool) {
		exit := n
		run := ToolRun{Tool: tool, Target: target, Failed: failed}
		if n%2 != 0 {
			run.Exit = &exit
		}
		e := &Evidence{Calls: []ToolRun{run, {Tool: target}}, Made: n, Succeeded: n / 2}
		if failed {
			e.Checkpoint = &Checkpoint{Commit: commit, Added: n, Deleted: -n}
		}
		log := WorkLog{Since: *e, Working: map[string]*Evidence{target: e, "b": {}}, Done: map[string]*Evidence{commit: e, tool + "x": nil}}
		if n%3 == 0 {
			log.Working, log.Done = nil, map[string]*Evidence{}
		}
		got, err := json.Marshal(log)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(plainLog{Since: log.Since, Working: log.Working, Done: log.Done})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("MarshalJSON:\n%s\nencoding/json:\n%s", got, want)
		}
		var back, wantBack plainLog
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("does not decode: %v\n%s", err, got)
		}
		if err := json.Unmarshal(want, &wantBack); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantBack, back); diff != "" {
			t.Fatalf("decodes differently (-want +got):\n%s", diff)
		}
	})
}
