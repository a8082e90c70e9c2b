package bot

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/h9-app/h9/agent/store"
)

// A record a newer h9 wrote, in a state this one does not know, is never
// taken for another state: decoding it says so, and every known state (and
// an unset one) still decodes.
func TestUnknownStateIsLeftAlone(t *testing.T) {
	t.Parallel()
	rec := func(st state) store.SessionRecord {
		data, err := json.Marshal(Session{State: st, Task: "t"})
		if err != nil {
			t.Fatal(err)
		}
		return store.SessionRecord{Meta: store.SessionMeta{ID: "T1/C1/1.1", Channel: "C1", Thread: "1.1", Owner: "U1"}, Data: data}
	}
	if _, err := decodeSession(rec("reviewing by committee")); !errors.Is(err, ErrUnknownState) {
		t.Fatalf("an unknown state decoded: err = %v", err)
	}
	for _, st := range append([]state{""}, allStates...) {
		s, err := decodeSession(rec(st))
		if err != nil || s.State != st {
			t.Errorf("state %q: %v, %+v", st, err, s)
		}
	}
}
