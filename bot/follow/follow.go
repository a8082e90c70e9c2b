// Package follow follows the pull or merge request h9 opened for a session
// (ARCHITECTURE.md, "Following a request"): the records a session keeps of
// it (Follow, Batch, Reply), the pure decisions over them (when a poll is
// due, what a poll's result means, what a press of Address feedback or
// Ignore does, what the addressing run's end and its push lead to), the
// words and markers h9 writes on the forge, the forge calls themselves
// (Read, SendReplies) and the Poller that knocks on the followed sessions
// when they are due.
//
// The bot's state machine calls the decisions and turns their results into
// Slack messages and effects; its actor makes the forge calls off the
// session's goroutine. Nothing here knows Slack, the session's actor or the
// store: a decision changes the *Follow it is given (the machine's own
// copy of the record) and says what follows.
package follow

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// Forges gives a configured repository's forge client (gitrepo.Repos).
type Forges interface {
	Forge(repo string) (forge.Client, error)
}

// Defaults of H9_FORGE_POLL and H9_FORGE_FOLLOW_FOR, and the shortest poll.
const (
	DefaultPoll      = 60 * time.Second
	DefaultFollowFor = 720 * time.Hour
	MinPoll          = 10 * time.Second
)

// Follow is a session's followed request, stored in the session's record:
// a restart or another replica goes on exactly where this one stopped.
type Follow struct {
	Forge   forge.Kind   `json:"forge"`
	Number  int          `json:"number"`
	URL     string       `json:"url"`
	HeadSHA string       `json:"head_sha,omitempty"` // what h9 pushed last
	Mode    string       `json:"mode"`               // the repository's follow_up when following began
	Cursor  forge.Cursor `json:"cursor"`
	// Ended says why following stopped (Merged, Closed, Expired): "" while
	// it goes on.
	Ended    string    `json:"ended,omitempty"`
	Touched  time.Time `json:"touched"`             // the last activity: opened, feedback, a push
	NextPoll time.Time `json:"next_poll,omitempty"` // when the request is read next
	Failures int       `json:"failures,omitempty"`  // polls failed in a row (backoff)
	Seq      int       `json:"seq,omitempty"`       // batches so far
	Batch    *Batch    `json:"batch,omitempty"`     // the latest batch with something to do
}

// Why following ended.
const (
	Merged  = "merged"
	Closed  = "closed"
	Expired = "expired"
)

// New is the record of a request h9 just opened or reused, read at once.
func New(kind forge.Kind, number int, url, mode string, at time.Time) *Follow {
	return &Follow{Forge: kind, Number: number, URL: url, Mode: mode, Touched: at, NextPoll: at}
}

// Batch is what one poll found that h9 may act on: the feedback the
// agent may read (write access, not h9's own) and the failing checks.
type Batch struct {
	Seq      int              `json:"seq"`
	Status   Status           `json:"status"`
	TS       string           `json:"ts,omitempty"` // its thread message
	Feedback []forge.Feedback `json:"feedback,omitempty"`
	Failed   []forge.Check    `json:"failed,omitempty"`
	LeftOut  int              `json:"left_out,omitempty"`  // comments by people without write access
	By       string           `json:"by,omitempty"`        // who pressed Address feedback or Ignore (AutoBy: follow_up: auto)
	QueuedBy string           `json:"queued_by,omitempty"` // pressed Address feedback during a run (Waiting)
	Answer   string           `json:"answer,omitempty"`    // the addressing run's final words
	// Replies are the answers on the forge, decided before any is sent;
	// Tries counts the attempts, so a later one first looks on the forge
	// for what an earlier one sent (replied once).
	Replies []Reply      `json:"replies,omitempty"`
	Tries   int          `json:"tries,omitempty"`
	Since   forge.Cursor `json:"since"` // the cursor before the first attempt
}

// Status is where a batch is, in this order.
type Status string

const (
	Waiting    Status = "waiting"    // posted with Address feedback and Ignore
	Addressing Status = "addressing" // its run is going on (or failed: Retry, Address feedback)
	Pushing    Status = "pushing"    // the run ended: the branch is pushed next
	Replying   Status = "replying"   // pushed: the replies are being sent
	Done       Status = "done"
	Ignored    Status = "ignored"
)

// AutoBy stands in Batch.By for follow_up: auto, which addressed it.
const AutoBy = "follow_up: auto"

// Reply is one answer h9 gives on the forge: to an inline comment (To
// set) or the summary comment on the request.
type Reply struct {
	Key  string          `json:"key"` // its marker, unique in the session
	To   *forge.Feedback `json:"to,omitempty"`
	Body string          `json:"body"`
	Sent bool            `json:"sent,omitempty"`
}

// Following reports whether the request is still followed.
func (f *Follow) Following() bool { return f != nil && f.Ended == "" }

// Label is the request as people name it: PR #12, or MR !12 on GitLab.
func (f *Follow) Label() string {
	if f.Forge == forge.GitLab {
		return "MR !" + strconv.Itoa(f.Number)
	}
	return "PR #" + strconv.Itoa(f.Number)
}

// Describe is the request as /h9 status shows it: PR #12, followed (or
// not followed: merged, closed, expired); "" for none.
func (f *Follow) Describe() string {
	if f == nil {
		return ""
	}
	if f.Following() {
		return f.Label() + ", followed"
	}
	return f.Label() + ", not followed (" + f.Ended + ")"
}

// Current is the latest batch, nil when there is none (or no request).
func (f *Follow) Current() *Batch {
	if f == nil {
		return nil
	}
	return f.Batch
}

// Open reports whether the batch still has work ahead.
func (b *Batch) Open() bool {
	return b != nil && b.Status != Done && b.Status != Ignored
}

// Working reports whether the batch's run has ended and h9 is pushing
// its work or answering on the forge: the session rests, but the feedback
// is not answered yet.
func (f *Follow) Working() bool {
	b := f.Current()
	return b != nil && (b.Status == Pushing || b.Status == Replying)
}

// Clone copies f deeply.
func (f *Follow) Clone() *Follow {
	if f == nil {
		return nil
	}
	c := *f
	c.Cursor = cloneCursor(f.Cursor)
	if f.Batch != nil {
		b := *f.Batch
		b.Feedback, b.Failed, b.Replies = slices.Clone(b.Feedback), slices.Clone(b.Failed), slices.Clone(b.Replies)
		b.Since = cloneCursor(b.Since)
		c.Batch = &b
	}
	return &c
}

func cloneCursor(c forge.Cursor) forge.Cursor {
	return forge.Cursor{ETags: maps.Clone(c.ETags), Seen: maps.Clone(c.Seen)}
}

// NoteHead records a push of the session branch (not the addressing
// run's: FeedbackPushed) and reports whether the record changed.
func (f *Follow) NoteHead(head string) bool {
	if !f.Following() || head == "" || f.HeadSHA == head {
		return false
	}
	f.HeadSHA = head
	return true
}
