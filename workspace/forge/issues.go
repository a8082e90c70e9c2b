package forge

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/workspace/textcut"
)

// What automations read of a forge (ARCHITECTURE.md, "Automations"): the
// issues that gain a label or an assignment, an issue's state, a comment
// on it, and the failing checks on a branch's head. Like the follow
// poll, each read is conditional where the forge allows it, and what it
// found is kept in a Cursor the caller stores.

// IssueTrigger is what an issue trigger watches: issues that gain the
// label Label, or that are assigned to the login Assigned (AssignedToMe:
// the user of h9's token). Exactly one of the two is set.
type IssueTrigger struct {
	Label    string
	Assigned string
}

// AssignedToMe in IssueTrigger.Assigned is the token's own user.
const AssignedToMe = "@me"

// IssueEvent is an issue that gained the trigger's label or assignment.
// Title, Body and Comments are untrusted: they reach the model only as
// quoted data.
type IssueEvent struct {
	// Key is stable across polls, restarts and replicas:
	// issue:<n>:label:<label>:<event id> or issue:<n>:assigned:<login>:<event id>.
	Key          string
	Number       int
	URL          string
	Title        string
	Body         string
	Actor        string // who labelled or assigned it
	ActorCanPush bool   // Actor has write access (as Feedback.CanPush)
	At           time.Time
	// Comments are the issue's newest comments, oldest first, read only
	// for an event from a writer (one request, none when the issue has no
	// comment); CommentsLeftOut counts the earlier ones not given, past
	// maxIssueComments or maxIssueCommentBytes.
	Comments        []IssueComment
	CommentsLeftOut int
}

// IssueComment is one person's comment on an issue (GitLab: a note that
// is not a system note).
type IssueComment struct {
	Author string
	Body   string
	At     time.Time
}

// Bounds on the comments an issue event brings: a long discussion must
// not crowd the task out of the model's context.
const (
	maxIssueComments     = 50
	maxIssueCommentBytes = 32 << 10 // all of them
	maxIssueCommentLen   = 8 << 10  // one, cut head and tail past it
)

// newestComments keeps the newest of list (oldest first) within the
// bounds, oldest first; total is how many the issue has (the list may be
// its last page only). It returns how many earlier ones it left out.
func newestComments(list []IssueComment, total int) ([]IssueComment, int) {
	total = max(total, len(list))
	var kept []IssueComment
	size := 0
	for _, c := range slices.Backward(list) {
		if len(kept) == maxIssueComments {
			break
		}
		c.Body = textcut.HeadTail(c.Body, maxIssueCommentLen)
		if size += len(c.Author) + len(c.Body); size > maxIssueCommentBytes {
			break
		}
		kept = append(kept, c)
	}
	slices.Reverse(kept)
	return kept, total - len(kept)
}

// Issue is an issue as it is now.
type Issue struct {
	Number int
	State  string // StateOpen or StateClosed
	Title  string
	Body   string
	URL    string
}

// Issues is the part of a Client automations use.
type Issues interface {
	// IssueEvents gives the issues that gained trig's label or assignment
	// since cur (on a first read, since since: no backfill of older
	// events), oldest first, each once; pull requests are left out.
	IssueEvents(ctx context.Context, trig IssueTrigger, since time.Time, cur Cursor) ([]IssueEvent, Cursor, error)
	// Issue reads issue number.
	Issue(ctx context.Context, number int) (Issue, error)
	// CommentOnIssue adds a comment to issue number.
	CommentOnIssue(ctx context.Context, number int, body string) error
	// BranchChecks reads branch's head commit and the failing checks on
	// it that cur has not given yet, with their log tails, on the follow
	// poll's schedule (every poll while none has appeared or one runs).
	BranchChecks(ctx context.Context, branch string, cur Cursor) (head string, failed []Check, next Cursor, err error)
}

// check is nil when exactly one of Label and Assigned is set.
func (trig IssueTrigger) check(k Kind) error {
	if (trig.Label == "") == (trig.Assigned == "") {
		return fmt.Errorf("%w: %s, reading issue events: a trigger names a label or an assignee, exactly one (got %+v)", ErrAPI, k.Title(), trig)
	}
	return nil
}

// issueKey is IssueEvent.Key.
func issueKey(number int, what, value string, id int64) string {
	return "issue:" + strconv.Itoa(number) + ":" + what + ":" + value + ":" + strconv.FormatInt(id, 10)
}

// matches reports what trig's event is: a label added (name), or an
// assignee added (login, me resolved); "" when neither matches.
func (trig IssueTrigger) matches(label, assignee, me string) string {
	switch {
	case label != "" && trig.Label != "" && strings.EqualFold(label, trig.Label):
		return "label"
	case assignee != "" && trig.Assigned != "" && strings.EqualFold(assignee, trig.assignee(me)):
		return "assigned"
	}
	return ""
}

func (trig IssueTrigger) assignee(me string) string {
	if trig.Assigned == AssignedToMe {
		return me
	}
	return trig.Assigned
}

// newHead forgets the checks given on an earlier head of a branch: they
// cannot come back, and the cursor stays small.
func (c Cursor) newHead(head string) {
	if c.Seen["checked"] == head {
		return
	}
	for k := range c.Seen {
		if strings.HasPrefix(k, "check:") || strings.HasPrefix(k, "status:") || strings.HasPrefix(k, "job:") || strings.HasPrefix(k, "pipeline:") {
			delete(c.Seen, k)
		}
	}
}

// unchanged reports whether issue n was read at updated already: a list
// "updated since the newest seen" gives back the issues updated at that
// very time, which need no second read. It remembers n at updated.
func (c Cursor) unchanged(n int64, updated time.Time) bool {
	key := "updated:" + strconv.FormatInt(n, 10)
	at := updated.UTC().Format(time.RFC3339Nano)
	if c.Seen[key] == at {
		return true
	}
	c.Seen[key] = at
	return false
}

// forgetUpdated keeps only the issues updated at newest: an issue updated
// earlier is listed again only after a new update, which its mark would
// not match anyway.
func (c Cursor) forgetUpdated(newest time.Time) {
	at := newest.UTC().Format(time.RFC3339Nano)
	for k, v := range c.Seen {
		if strings.HasPrefix(k, "updated:") && v != at {
			delete(c.Seen, k)
		}
	}
}
