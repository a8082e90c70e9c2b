package bot

import (
	"reflect"
	"testing"

	"github.com/h9-app/h9/agent"
)

// A queued reply's files and the current request's files are part of the
// session's record: a restart before their run starts loses none.
func TestSessionRecordKeepsFiles(t *testing.T) {
	t.Parallel()
	f := agent.Attachment{Path: ".h9/attachments/1.2-a.png", Name: "a.png", Size: 3, Source: "https://files.slack.com/x"}
	s := &Session{ID: "T1/C1/1.0", Channel: "C1", ThreadTS: "1.0", State: stateRunning,
		Files: []agent.Attachment{f}, Queue: []QueuedReply{{User: "U1", Text: "", TS: "1.2", Files: []agent.Attachment{f}}}}
	rec, err := s.record()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSession(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Files, s.Files) || !reflect.DeepEqual(got.Queue, s.Queue) {
		t.Errorf("after the store: files %+v, queue %+v", got.Files, got.Queue)
	}
}
