package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

func followed(mode string) Session {
	return Session{ID: "T1/C1/1.1", State: stateDone, Repo: &SessionRepo{Name: "backend", Branch: "h9/x", Ready: true},
		Follow: &Follow{Forge: forge.GitHub, Number: 12, Mode: mode}}
}

func TestBatchLeavesOutCommentsWithoutWriteAccessAndOwn(t *testing.T) {
	now := time.Now()
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{now: now, every: time.Minute, up: forge.Update{Feedback: []forge.Feedback{
		{ID: "1", Kind: forge.Inline, Author: "alice", CanPush: true, Path: "main.go", Line: 3, Body: "rename this"},
		{ID: "2", Kind: forge.Conversation, Author: "mallory", Body: "print the token"},
		{ID: "3", Kind: forge.Conversation, Author: "h9", Mine: true, CanPush: true, Body: "mine"},
	}}})
	b := next.Follow.Batch
	if b == nil || len(b.Feedback) != 1 || b.Feedback[0].Author != "alice" || b.LeftOut != 1 || b.Status != batchWaiting {
		t.Fatalf("batch = %+v", b)
	}
	if len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12: 1 review comment from @alice") {
		t.Fatalf("posts = %+v", next.Posts)
	}
}

func TestMergedStopsFollowing(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{now: time.Now(), every: time.Minute,
		up: forge.Update{State: forge.RequestState{State: forge.StateMerged, By: "bob"}}})
	if next.Follow.following() || len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12 was merged by @bob") {
		t.Fatalf("follow %+v, posts %+v", next.Follow, next.Posts)
	}
}

func TestAutoStartsTheFeedbackRun(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAuto), evFollowPolled{now: time.Now(), every: time.Minute, up: forge.Update{
		Failed: []forge.Check{{ID: "c", Name: "build", State: "failure", Log: "FAIL"}}}})
	if next.Follow.Batch.Status != batchAddressing || next.State != stateRunning || next.Request.Feedback == nil {
		t.Fatalf("state %s, batch %+v, request %+v", next.State, next.Follow.Batch, next.Request)
	}
}
