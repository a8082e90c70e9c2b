package bot

import (
	"testing"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// A slash command whose team_id differs from (or lacks) the events' still
// makes the session that the thread's replies reach: session ids use the
// bot's own team, never a payload's.
func TestReplyReachesSessionWhateverPayloadTeam(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	before := len(e.rootMessages())
	if _, err := e.slack.SlashCommand(e.ctx, fakeslack.SlashCommand{Text: "plan team test", UserID: testUser,
		ChannelID: testChannel, TeamID: "TOTHER"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the root message", func() bool { return len(e.rootMessages()) > before })
	root := e.rootMessages()[before].TS
	review := e.waitMessage(root, render.ActionApproveAuto, 1)

	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
	e.reply(testUser, root, "also b") // its event carries the server's team_id
	e.waitFor("the revised review", func() bool {
		for _, m := range e.botMessages(root, render.ActionApproveAuto) {
			if m.TS != review.TS {
				return true
			}
		}
		return false
	})
}

// Without auth.test the bot learns its user id from the events'
// authorizations, so a mention delivered as message before app_mention
// starts exactly one session instead of being dropped as chatter.
func TestMentionMessageFirstWithoutAuthTest(t *testing.T) {
	e := newEnv(t)
	e.slack.FailNext("auth.test", "unknown_method")
	e.restart()
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	ts := "1800000000.000100"
	inner := map[string]any{"type": "message", "user": testUser, "text": "<@" + e.slack.Options().BotUserID + "> add a health check",
		"channel": testChannel, "ts": ts, "event_ts": ts, "channel_type": "channel"}
	if _, err := e.slack.SendEvent(e.ctx, "", inner); err != nil {
		t.Fatal(err)
	}
	mention := map[string]any{"type": "app_mention", "user": testUser, "text": inner["text"], "channel": testChannel, "ts": ts, "event_ts": ts}
	if _, err := e.slack.SendEvent(e.ctx, "", mention); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(ts, render.ActionApproveAuto, 1)
	if got := e.model.Calls(); got != 2 {
		t.Errorf("model calls = %d, want 2 (one plan run)", got)
	}
}

// A session made while auth.test failed (so with no team in its id) still
// gets its thread's replies, clicks and status line after a start that
// knows the team, and one made with the team after a start that does not.
func TestSessionsSurviveAuthTestComingAndGoing(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	for _, tc := range []struct {
		name                  string
		failFirst, failSecond bool
	}{
		{"made without the team, reached with it", true, false},
		{"made with the team, reached without it", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			restart := func(failAuth bool) {
				if failAuth {
					e.slack.FailNext("auth.test", "fatal_error")
				}
				e.restart()
			}
			restart(tc.failFirst)
			thread, review := e.planned("team "+tc.name, "a:pending")
			restart(tc.failSecond)

			e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
			e.reply(testUser, thread, "also b")
			e.waitMessage(thread, render.ActionApproveAuto, 2)
			e.waitChecklist(thread, "0/2 tasks", "awaiting review")
			e.click(testUser, review.TS, render.ActionApproveAuto) // the first review, now superseded
			e.waitEphemeral(testChannel, testUser, "superseded")
			e.slash(testUser, testChannel, "status")
			e.waitEphemeral(testChannel, testUser, "team "+tc.name)
		})
	}
}
