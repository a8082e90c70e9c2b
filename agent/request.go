package agent

import (
	"fmt"
	"strings"
)

// Intent is what a caller asks a run to do. The agent owns the words: it
// turns an intent into the Planning module's prompt (prompts.go), so a caller never
// chooses prompt texts.
type Intent int

// The intents. The zero Intent is none, so a Request must name one.
const (
	// IntentTask starts on the session's task (Text): the first run of a
	// session, planning or executing as the run's mode says.
	IntentTask Intent = iota + 1
	// IntentReply sends the user's reply (Text): a revision of the plan in
	// plan mode, otherwise guidance or follow-up work.
	IntentReply
	// IntentExecute starts executing an approved plan (the Planning module's execPrompt).
	IntentExecute
	// IntentContinue goes on with the next open todo (the Planning module's
	// execContinuePrompt): auto-run's next run, Resume, a restart.
	IntentContinue
	// IntentProceed asks the model again with the history as it is, no
	// new prompt: a run stopped by its token budget goes on where it
	// stopped. A history with nothing to answer (it ends with the model's
	// final answer) gets the continue prompt instead.
	IntentProceed
	// IntentFeedback addresses review feedback and failing checks from the
	// session's pull/merge request (Feedback): the items are quoted in the
	// prompt as untrusted data, never as the user's instructions.
	IntentFeedback
)

// Request is one run's intent and, for the intents that carry them, the
// user's words.
type Request struct {
	// Network is news of the session's network, told with the prompt.
	Network *NetworkNews `json:"network,omitempty"`

	Intent Intent `json:"intent"`
	Text   string `json:"text,omitempty"`
	// Feedback is what IntentFeedback addresses (feedback.go).
	Feedback *Feedback `json:"feedback,omitempty"`
}

// prompt is the user message a run of r sends, before plan mode's prefix;
// files are those shared with a task or reply (RunOptions.Files).
func (r Request) prompt(files []Attachment) (string, error) {
	switch r.Intent {
	case IntentTask, IntentReply:
		if r.Text == "" && len(files) == 0 {
			return "", fmt.Errorf("%w: %s without text", ErrInvalidRequest, r.Intent)
		}
		return strings.TrimPrefix(r.Text+attachmentNote(files), "\n\n"), nil
	case IntentExecute:
		return ExecPrompt, nil
	case IntentContinue, IntentProceed:
		return ContinuePrompt, nil
	case IntentFeedback:
		return r.Feedback.prompt()
	}
	return "", fmt.Errorf("%w: %s", ErrInvalidRequest, r.Intent)
}

var intentNames = map[Intent]string{
	IntentTask: "task", IntentReply: "reply", IntentExecute: "execute", IntentContinue: "continue",
	IntentProceed: "proceed", IntentFeedback: "feedback",
}

func (i Intent) String() string {
	if n, ok := intentNames[i]; ok {
		return n
	}
	return fmt.Sprintf("Intent(%d)", int(i))
}

// MarshalText stores an intent by name (none as ""), so a stored Request
// stays valid when intents are added.
func (i Intent) MarshalText() ([]byte, error) {
	if i == 0 {
		return nil, nil
	}
	if _, ok := intentNames[i]; !ok {
		return nil, fmt.Errorf("%w: %s", ErrInvalidRequest, i)
	}
	return []byte(i.String()), nil
}

// UnmarshalText reads what MarshalText wrote.
func (i *Intent) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*i = 0
		return nil
	}
	for intent, name := range intentNames {
		if name == string(b) {
			*i = intent
			return nil
		}
	}
	return fmt.Errorf("%w: unknown intent %q", ErrInvalidRequest, b)
}

// NetworkNews is what a run's request tells the agent about its network:
// the hosts the thread allowed since its last request (ARCHITECTURE.md,
// "Network for the agent"), so it knows a command refused before may now
// succeed.
type NetworkNews struct {
	Allowed []string `json:"allowed,omitempty"` // host:port entries
}

// note is the paragraph the prompt gains; "" for none.
func (n *NetworkNews) note() string {
	if n == nil || len(n.Allowed) == 0 {
		return ""
	}
	return "\n\nNote from h9: since your last request, the thread allowed your commands to reach " +
		"`" + strings.Join(n.Allowed, "`, `") + "` through h9's network proxy. " +
		"A command that was refused one of these hosts may be run again."
}
