package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/h9-app/h9/agent/store"
)

// healthCases: what h9's readiness check relies on.
var healthCases = []testCase{
	{"PingAnswers", testPingAnswers},
}

// A backend that works answers Ping, before and after writes and after a
// reopen; a Ping whose context is done fails as a backend failure, so a
// readiness check with a deadline never reports a store that did not answer.
func testPingAnswers(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	must(t, b.Ping(ctx))
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "backend"))
	must(t, b.Ping(ctx))
	b = reopen(t)
	must(t, b.Ping(ctx))
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Ping(done); !errors.Is(err, store.ErrBackend) {
		t.Fatalf("Ping with a cancelled context = %v, want an error wrapping store.ErrBackend", err)
	}
}
