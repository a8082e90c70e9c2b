package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/bot/render"
)

func TestPermissions(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.AllowedUsers = []string{testUser, "U2"}
		c.AllowedChannels = []string{testChannel}
		c.Admins = []string{"UADMIN"}
	})
	// Users and channels outside the lists get an ephemeral refusal, nothing else.
	e.slash("U3", testChannel, "plan sneak in")
	e.waitEphemeral(testChannel, "U3", "H9_ALLOWED_USERS")
	e.slash(testUser, "C2", "plan elsewhere")
	e.waitEphemeral("C2", testUser, "H9_ALLOWED_CHANNELS")
	if len(e.slack.Calls("chat.postMessage")) != 0 {
		t.Fatal("a refused command posted a message")
	}

	thread, review := e.planned("guarded", "a:pending")

	// An allowed user who is not the owner may not decide.
	e.click("U2", review.TS, render.ActionApproveAuto)
	e.waitEphemeral(testChannel, "U2", "Only <@"+testUser+">")
	// A forged value naming an unknown session, and garbage, are refused.
	e.clickValue(testUser, review.TS, render.ActionApproveAuto, render.BlockReviewActions,
		render.ButtonValue{SessionID: "T1/C1/9999.0001", Revision: 1})
	e.waitEphemeral(testChannel, testUser, "does not know")
	e.clickValue(testUser, review.TS, render.ActionApproveAuto, render.BlockReviewActions, render.ButtonValue{})
	e.waitEphemeral(testChannel, testUser, "not one h9 recognises")
	if e.model.Calls() != 2 {
		t.Fatalf("a refused click ran the model: %d calls", e.model.Calls())
	}
	// An admin may decide for the owner.
	e.click("UADMIN", review.TS, render.ActionCancel)
	e.waitChecklist(thread, "cancelled")
}

func TestHelpUsageAndStatus(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ text, want string }{
		{"help", "/h9 plan"},
		{"", "/h9 plan"},
		{"plan", "needs a task"},
		{"frobnicate now", "did not understand"},
	} {
		ack := e.slash(testUser, testChannel, tc.text)
		if !strings.Contains(string(ack.Payload), "ephemeral") || !strings.Contains(string(ack.Payload), tc.want) {
			t.Errorf("/h9 %s: ack %s, want an ephemeral with %q", tc.text, ack.Payload, tc.want)
		}
	}
	e.planned("first task", "a:pending", "b:pending")
	e.planned("second task", "a:pending")

	e.slash("U5", testChannel, "status")
	e.waitEphemeral(testChannel, "U5", "second task")
	var status string
	for _, m := range e.slack.Ephemerals(testChannel, "U5") {
		status = m.Text + string(m.Blocks)
	}
	first, sec := strings.Index(status, "first task"), strings.Index(status, "second task")
	if first < 0 || sec < 0 || sec > first {
		t.Errorf("status not most recent first: %s", status)
	}
	if !strings.Contains(status, "0/2 tasks") || !strings.Contains(status, "awaiting review") {
		t.Errorf("status lacks progress or state: %s", status)
	}
	if !strings.Contains(status, "archives") && !strings.Contains(status, "http") {
		t.Errorf("status has no thread links: %s", status)
	}
}
