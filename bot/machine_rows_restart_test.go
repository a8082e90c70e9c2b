package bot

import (
	"slices"
	"testing"

	"github.com/h9-app/h9/planning"
)

var recoverRows = []row{
	{what: "a plan run cut by a restart plans the same request again", from: sess(statePlanning, planMode),
		ev: evRecover{}, to: statePlanning,
		effects: []string{"log resuming after a restart", notice(restartNotice), "save", "start task (plan) the task"}},
	{what: "an execution cut by a restart continues", from: sess(stateRunning, autoRun),
		ev: evRecover{}, to: stateRunning,
		effects: []string{"log resuming after a restart", notice(restartNotice), "save", "start continue (default)"}},
	{what: "a run stopped just before the restart stays stopped", from: sess(stateRunning, stoppedBy("U2")),
		ev: evRecover{}, to: stateIdle,
		effects: []string{notice(stoppedWords), "save", "refresh"}},
	{what: "a pending step approval is reported interrupted with Resume", from: sess(stateAwaitingApproval, pendingStep),
		ev: evRecover{}, to: stateInterrupted,
		effects: []string{"log step approval interrupted by a restart", "post h9_interrupted", "save", "refresh"},
		check:   func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "an approval saved but not yet posted is interrupted too", from: sess(stateRunning, pendingStep, func(s *Session) { s.Approval.TS = "" }),
		ev: evRecover{}, to: stateInterrupted,
		effects: []string{"log step approval interrupted by a restart", "post h9_interrupted", "save", "refresh"}},
	{what: "a session at rest needs nothing", from: sess(stateIdle), ev: evRecover{}, to: stateIdle},
	{what: "a Done decided but maybe not posted is settled, nothing else", from: sess(stateDone, pendingPosts(postNotice)),
		ev: evRecover{}, to: stateDone, effects: []string{"finish the pending posts"}},
	{what: "a pending post goes before the run resumes", from: sess(stateRunning, autoRun, pendingPosts(postNotice)),
		ev: evRecover{}, to: stateRunning,
		effects: []string{"finish the pending posts", "log resuming after a restart", notice(restartNotice), "save", "start continue (default)"}},
}

var bookkeepingRows = []row{
	{what: "/h9 run: the first run executes with auto-run on", from: Session{ID: "T1/C1/1.1"},
		ev: evCreate{owner: "U1", task: "ship it", mode: planning.PlanModeDefault}, to: stateRunning,
		effects: []string{"log session created", "save for the run's gate", "post the checklist", "start task (default) ship it gated"},
		check:   func(t *testing.T, s Session) { wantBool(t, "auto-run", s.AutoRun, true) }},
	{what: "the checklist's ts is saved once known", from: sess(stateRunning, func(s *Session) { s.ChecklistTS = "" }),
		ev: evChecklistPosted{ts: "1.2"}, to: stateRunning, effects: []string{"save"},
		check: func(t *testing.T, s Session) { wantString(t, "checklist ts", s.ChecklistTS, "1.2") }},
	{what: "a ts already saved needs no save", from: sess(stateRunning),
		ev: evChecklistPosted{ts: "1.2"}, to: stateRunning},
	{what: "a posted review: its ts is kept, the post no longer pending", from: sess(stateAwaitingReview, reviewOpen, pendingPosts(postReview)),
		ev: evPosted{key: "review-1", ts: "1.8"}, to: stateAwaitingReview, effects: []string{"save"},
		check: func(t *testing.T, s Session) {
			wantString(t, "review ts", s.ReviewTS, "1.8")
			wantInt(t, "pending posts", len(s.Posts), 0)
		}},
	{what: "a posted Done is no longer pending; the review's ts stays", from: sess(stateDone, reviewOpen, pendingPosts(postNotice)),
		ev: evPosted{key: "notice-1", ts: "1.9"}, to: stateDone, effects: []string{"save"},
		check: func(t *testing.T, s Session) {
			wantString(t, "review ts", s.ReviewTS, "1.5")
			wantInt(t, "pending posts", len(s.Posts), 0)
		}},
	{what: "a post no longer pending needs nothing", from: sess(stateDone),
		ev: evPosted{key: "notice-4", ts: "1.9"}, to: stateDone},
}

// pendingPosts gives the session pending posts of those kinds.
func pendingPosts(kinds ...string) func(*Session) {
	return func(s *Session) {
		for _, k := range kinds {
			s.PostSeq++
			s.Posts = append(s.Posts, PendingPost{Key: k + "-" + itoa(s.PostSeq), Kind: k, Text: "words"})
		}
	}
}

// wantPosts checks the keys of the session's pending posts.
func wantPosts(t *testing.T, s Session, keys ...string) {
	t.Helper()
	var got []string
	for _, p := range s.Posts {
		got = append(got, p.Key)
	}
	if !slices.Equal(got, keys) {
		t.Errorf("pending posts %v, want %v", got, keys)
	}
}
