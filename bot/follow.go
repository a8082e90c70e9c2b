package bot

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// Following the request h9 opened (ARCHITECTURE.md, "Following a
// request"): the session records the request, what a poll has seen and
// the batch of feedback being shown, addressed and answered, so that a
// restart or another replica goes on exactly where this one stopped.

// Forges gives a configured repository's forge client (gitrepo.Repos).
type Forges interface {
	Forge(repo string) (forge.Client, error)
}

// Defaults of H9_FORGE_POLL and H9_FORGE_FOLLOW_FOR.
const (
	DefaultForgePoll      = 60 * time.Second
	DefaultForgeFollowFor = 720 * time.Hour
	MinForgePoll          = 10 * time.Second
)

// forgeTimeout bounds each forge call of following.
const forgeTimeout = 30 * time.Second

// Follow is a session's followed request.
type Follow struct {
	Forge   forge.Kind   `json:"forge"`
	Number  int          `json:"number"`
	URL     string       `json:"url"`
	HeadSHA string       `json:"head_sha,omitempty"` // what h9 pushed last
	Mode    string       `json:"mode"`               // the repository's follow_up when following began
	Cursor  forge.Cursor `json:"cursor"`
	// Ended says why following stopped: "" while it goes on.
	Ended    string    `json:"ended,omitempty"`
	Touched  time.Time `json:"touched"`             // the last activity: opened, feedback, a push
	NextPoll time.Time `json:"next_poll,omitempty"` // when the request is read next
	Failures int       `json:"failures,omitempty"`  // polls failed in a row (backoff)
	Seq      int       `json:"seq,omitempty"`       // batches so far
	Batch    *Batch    `json:"batch,omitempty"`     // the latest batch with something to do
}

// Why following ended.
const (
	endMerged  = "merged"
	endClosed  = "closed"
	endExpired = "expired"
)

// following reports whether the request is still followed.
func (f *Follow) following() bool { return f != nil && f.Ended == "" }

// label is the request as people name it: PR #12, or MR !12 on GitLab.
func (f *Follow) label() string {
	if f.Forge == forge.GitLab {
		return "MR !" + strconv.Itoa(f.Number)
	}
	return "PR #" + strconv.Itoa(f.Number)
}

// Batch is what one poll found that h9 may act on: the feedback the
// agent may read (write access, not h9's own) and the failing checks.
type Batch struct {
	Seq      int              `json:"seq"`
	Status   string           `json:"status"`
	TS       string           `json:"ts,omitempty"` // its thread message
	Feedback []forge.Feedback `json:"feedback,omitempty"`
	Failed   []forge.Check    `json:"failed,omitempty"`
	LeftOut  int              `json:"left_out,omitempty"`  // comments by people without write access
	By       string           `json:"by,omitempty"`        // who pressed Address feedback or Ignore
	QueuedBy string           `json:"queued_by,omitempty"` // pressed Address feedback during a run (addressWaiting)
	Answer   string           `json:"answer,omitempty"`    // the addressing run's final words
	// Replies are the answers on the forge, decided before any is sent;
	// Tries counts the attempts, so a later one first looks on the forge
	// for what an earlier one sent (replied once).
	Replies []ForgeReply `json:"replies,omitempty"`
	Tries   int          `json:"tries,omitempty"`
	Since   forge.Cursor `json:"since"` // the cursor before the first attempt
}

// Batch statuses, in order.
const (
	batchWaiting    = "waiting"    // posted with Address feedback and Ignore
	batchAddressing = "addressing" // its run is going on (or failed: Retry, Address feedback)
	batchPushing    = "pushing"    // the run ended: the branch is pushed next
	batchReplying   = "replying"   // pushed: the replies are being sent
	batchDone       = "done"
	batchIgnored    = "ignored"
)

// open reports whether the batch still has work ahead.
func (b *Batch) open() bool {
	return b != nil && b.Status != batchDone && b.Status != batchIgnored
}

// ForgeReply is one answer h9 gives on the forge: to an inline comment
// (To set) or the summary comment on the request.
type ForgeReply struct {
	Key  string          `json:"key"` // its marker, unique in the session
	To   *forge.Feedback `json:"to,omitempty"`
	Body string          `json:"body"`
	Sent bool            `json:"sent,omitempty"`
}

// clone copies f deeply.
func (f *Follow) clone() *Follow {
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

// startFollowing begins following a request h9 opened or reused, unless
// the repository says follow_up: off or h9 has no client for its forge.
func (b *Bot) startFollowing(repoName string, number int, url string, at time.Time) *Follow {
	if b.cfg.Forges == nil || number == 0 {
		return nil
	}
	repo, ok := b.repo(repoName)
	if !ok || repo.FollowMode() == gitrepo.FollowOff {
		return nil
	}
	c, err := b.cfg.Forges.Forge(repoName)
	if err != nil {
		b.log.Warn("the request cannot be followed", "repo", repoName, "err", err)
		return nil
	}
	return &Follow{Forge: c.Kind(), Number: number, URL: url, Mode: repo.FollowMode(), Touched: at, NextPoll: at}
}

// rateLimited is the wait a forge asked for, when it did.
func rateLimited(err error) (time.Time, bool) {
	var rl *forge.RateLimited
	if errors.As(err, &rl) {
		return rl.Until, true
	}
	return time.Time{}, false
}

// forgeClient is the session repository's forge client.
func (b *Bot) forgeClient(repo string) (forge.Client, error) {
	if b.cfg.Forges == nil {
		return nil, errors.New("h9 has no forge clients")
	}
	return b.cfg.Forges.Forge(repo)
}

// forgeCtx bounds one forge call.
func forgeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, forgeTimeout)
}

// status is the request as /h9 status shows it: PR #12, followed (or
// not followed: merged, closed, expired).
func (f *Follow) status() string {
	if f == nil {
		return ""
	}
	if f.following() {
		return f.label() + ", followed"
	}
	return f.label() + ", not followed (" + f.Ended + ")"
}
