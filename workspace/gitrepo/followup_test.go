package gitrepo

import (
	"errors"
	"testing"
)

func TestFollowUpIsAskAutoOrOff(t *testing.T) {
	for in, want := range map[string]string{"": FollowAsk, "ask": FollowAsk, "AUTO": FollowAuto, " off ": FollowOff} {
		got, err := Check([]Repo{{Name: "r", URL: "/tmp/r", FollowUp: in}})
		if err != nil || got[0].FollowMode() != want {
			t.Errorf("follow_up %q: %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := Check([]Repo{{Name: "r", URL: "/tmp/r", FollowUp: "sometimes"}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("follow_up sometimes: %v, want ErrInvalidConfig", err)
	}
}
