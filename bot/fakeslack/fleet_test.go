package fakeslack_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/h9-app/h9/bot/fakeslack"
)

// Three replicas of an app: envelopes are spread over their connections,
// each goes to one of them, and each replica's Web API calls carry its tag.
func TestEnvelopesSpreadOverConnections(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	apps := map[string]*app{}
	for _, r := range []string{"r1", "r2", "r3"} {
		apps[r] = startAppAt(t, s, s.APIURLFor(r), nil)
	}
	ctx := testCtx(t)
	if err := s.WaitConnections(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := s.Replicas(); !slices.Equal(sorted(got), []string{"r1", "r2", "r3"}) {
		t.Errorf("replicas of the open connections = %v", got)
	}
	for range 9 {
		if _, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "status"}); err != nil {
			t.Fatal(err)
		}
	}
	for r, a := range apps {
		if n := len(a.got); n != 3 {
			t.Errorf("replica %s got %d of 9 envelopes, want 3", r, n)
		}
		if _, err := a.api.AuthTestContext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	byReplica := map[string]int{}
	for _, c := range s.Calls("auth.test") {
		byReplica[c.Replica]++
	}
	if byReplica["r1"] != 1 || byReplica["r2"] != 1 || byReplica["r3"] != 1 {
		t.Errorf("auth.test calls by replica = %v", byReplica)
	}
}

// Fanout sends one envelope to two connections at once, with one id.
func TestFanoutDeliversOneEnvelopeTwice(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a, b := startAppAt(t, s, s.APIURLFor("a"), nil), startAppAt(t, s, s.APIURLFor("b"), nil)
	ctx := testCtx(t)
	if err := s.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	s.Fanout(2)
	ack, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "run it"})
	if err != nil {
		t.Fatal(err)
	}
	ea, eb := a.next(t), b.next(t)
	if ea.Request.EnvelopeID != ack.EnvelopeID || eb.Request.EnvelopeID != ack.EnvelopeID {
		t.Errorf("envelope ids %s and %s, want both %s", ea.Request.EnvelopeID, eb.Request.EnvelopeID, ack.EnvelopeID)
	}
}

// A connection that never acks (a paused process) does not swallow the
// envelope: after AckTimeout it goes to another connection, marked a retry.
func TestUnackedEnvelopeGoesToAnotherConnection(t *testing.T) {
	s := newServer(t, fakeslack.Options{AckTimeout: 300 * time.Millisecond})
	ctx := testCtx(t)
	mute, _, err := websocket.DefaultDialer.DialContext(ctx, socketURLAt(t, s.APIURLFor("mute")), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	var muted atomic.Int32
	go func() { // reads hello and envelopes, acks nothing
		for {
			if _, _, err := mute.ReadMessage(); err != nil {
				return
			}
			muted.Add(1)
		}
	}()
	live := startAppAt(t, s, s.APIURLFor("live"), nil)
	if err := s.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for range 2 { // one of the two goes to the mute connection first
		if _, err := s.SendEvent(ctx, "", map[string]any{"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": "1.1"}); err != nil {
			t.Fatal(err)
		}
	}
	first, second := live.next(t), live.next(t)
	retries, swallowed := first.Request.RetryAttempt+second.Request.RetryAttempt, int(muted.Load())-1 // less hello
	if swallowed == 0 || retries != swallowed {
		t.Errorf("retry attempts %d and %d; the mute connection swallowed %d envelopes, want them all redelivered as retries",
			first.Request.RetryAttempt, second.Request.RetryAttempt, swallowed)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
