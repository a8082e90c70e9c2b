package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// /h9 instructions shows, sets and clears the channel's instructions; a
// new session of the channel gets them in its system prompt after
// AGENTS.md, marked as the channel's; more than 4,000 characters, or a
// user who is not an admin when H9_ADMINS is set, changes nothing.
func TestChannelInstructions(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Admins = []string{"UADMIN"} })
	e.slash(testUser, testChannel, "instructions")
	e.waitEphemeral(testChannel, testUser, "There are no instructions for")

	if ack := ackText(e.slash(testUser, testChannel, "instructions set never touch migrations")); !strings.Contains(ack, "Only an h9 admin") {
		t.Errorf("a non-admin's set: ack %s", ack)
	}
	if ack := ackText(e.slash("UADMIN", testChannel, "instructions set "+strings.Repeat("é", MaxInstructions+1))); !strings.Contains(ack, "at most 4000") {
		t.Errorf("a set over the limit: ack %s", ack)
	}
	e.slash("UADMIN", testChannel, "instructions set This channel is the payments service:\nnever touch migrations.")
	e.waitEphemeral(testChannel, "UADMIN", "Saved.")
	e.slash(testUser, testChannel, "instructions")
	e.waitEphemeral(testChannel, testUser, "never touch migrations.")

	e.model.Enqueue(fakemodel.Text("plan ready"))
	thread := e.startSession("plan", "add a refund endpoint")
	e.waitMessage(thread, "plan ready", 1)
	sys := e.model.Requests()[0].Messages[0].Content
	i := strings.Index(sys, "Instructions for this Slack channel")
	if i < 0 || !strings.Contains(sys[i:], "This channel is the payments service:\nnever touch migrations.") {
		t.Errorf("system prompt lacks the channel's instructions:\n%s", sys)
	}

	e.slash("UADMIN", testChannel, "instructions clear")
	e.waitEphemeral(testChannel, "UADMIN", "Cleared")
	e.model.Enqueue(fakemodel.Text("second plan"))
	thread2 := e.startSession("plan", "another task")
	e.waitMessage(thread2, "second plan", 1)
	reqs := e.model.Requests()
	if sys := reqs[len(reqs)-1].Messages[0].Content; strings.Contains(sys, "Instructions for this Slack channel") {
		t.Errorf("cleared instructions still reach the agent:\n%s", sys)
	}
	if ack := ackText(e.slash(testUser, testChannel, "help")); !strings.Contains(ack, "/h9 instructions set") {
		t.Errorf("/h9 help does not tell about instructions: %s", ack)
	}
}
