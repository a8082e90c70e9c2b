// Package forge is h9's one seam to the code forges it opens requests on
// and follows afterwards: GitHub (go-github), GitLab (gitlab.com/gitlab-org/
// api/client-go) and Gitea/Forgejo (code.gitea.io/sdk/gitea). Everything
// above this package speaks only these types; each forge's client lives in
// a file of its own, and one conformance suite (forgetest) runs against a
// fake of each forge at the HTTP boundary.
package forge

import (
	"context"
	"time"
)

// Kind names a forge's API.
type Kind string

const (
	GitHub Kind = "github"
	GitLab Kind = "gitlab"
	Gitea  Kind = "gitea" // Forgejo speaks Gitea's API
)

// Project is one repository on one forge, as a repo entry's forge: key
// resolves it.
type Project struct {
	Kind     Kind
	Path     string // owner/name; GitLab: group/subgroup/name
	API      string // REST base, ending in /
	TokenEnv string // the variable that held the token (for messages only)
}

// Request is an open pull request (GitHub, Gitea) or merge request (GitLab).
type Request struct {
	Number int    // PR number, MR iid
	URL    string // the page a person opens
	Reused bool   // it existed already; its body was brought up to date
}

// RequestState is what a followed request has become.
type RequestState struct {
	State   string // StateOpen, StateMerged or StateClosed
	By      string // who merged or closed it, when the forge says
	HeadSHA string // the request's head commit now
}

const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed"
)

// FeedbackKind tells the three kinds of feedback apart.
type FeedbackKind string

const (
	Inline       FeedbackKind = "inline"       // a review comment on a line of the diff
	Review       FeedbackKind = "review"       // a review that requests changes or has a body
	Conversation FeedbackKind = "conversation" // a comment on the request itself
)

// Feedback is one comment or review, as the forge gave it. Its words are
// untrusted input: they reach the model only as quoted data.
type Feedback struct {
	ID      string // unique within the request and kind; stable across polls
	Kind    FeedbackKind
	Author  string // login
	CanPush bool   // Author has write access (GitHub write/maintain/admin, GitLab Developer+, Gitea write)
	Mine    bool   // written by h9's own token
	Body    string
	Path    string // Inline: file and line, and the diff hunk around it
	Line    int
	Hunk    string
	URL     string
	Created time.Time
	Thread  string // what a reply needs (GitLab discussion id, GitHub comment id)
}

// Check is a failed check on the head commit: a check run or commit
// status (GitHub), a failed pipeline job (GitLab), a commit status (Gitea).
type Check struct {
	ID    string
	Name  string
	State string // failure, timed_out, error, …
	URL   string
	Log   string // the last 200 lines of the job's log, or the description
}

// Cursor is what a poll remembers between calls (ETags, the newest ids
// seen); it is opaque to callers and stored with the session as JSON.
type Cursor struct {
	ETags map[string]string `json:"etags,omitempty"`
	Seen  map[string]string `json:"seen,omitempty"`
}

// Update is what one poll found new since its cursor.
type Update struct {
	State    RequestState
	Feedback []Feedback
	Failed   []Check
	Requests int // API requests the poll made, 304s included
	Cached   int // of those, answered 304 Not Modified
}

// Client is one forge's API for one project, with its token.
type Client interface {
	Kind() Kind
	// OpenRequest opens the request head → base, or finds the open one
	// from head and updates its body: never a duplicate.
	OpenRequest(ctx context.Context, head, base, title, body string) (Request, error)
	// CheckAccess is nil when the token is accepted, the project exists
	// and the token may push and open requests; else it says what lacks.
	CheckAccess(ctx context.Context) error
	// Poll reads what is new on request number since cur, with
	// conditional requests where the forge has them.
	Poll(ctx context.Context, number int, headSHA string, cur Cursor) (Update, Cursor, error)
	// Reply answers an inline comment in its thread.
	Reply(ctx context.Context, number int, to Feedback, body string) error
	// Comment adds a conversation comment to the request.
	Comment(ctx context.Context, number int, body string) error
	// Issues is what automations read and write (ARCHITECTURE.md,
	// "Automations").
	Issues
}
