package automation

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"
)

// Automation is one checked entry of an automations file.
type Automation struct {
	// Name is the entry's name; a repository's are "<repo>/<name>".
	Name string
	// Source says where it is defined: the operator's file, or a
	// repository's (Repo then names it).
	Source Source
	// Line is the entry's line in its file.
	Line    int
	Channel string // where its sessions start
	Owner   string // Slack user ID; "" = admins only
	Repo    string // repository key; "" = none
	Task    string // the operator's words: the only instruction
	Mode    Mode
	Trigger Trigger
	// Zone is the IANA timezone its schedule (and its daily budget's day)
	// is in; UTC by default.
	Zone *time.Location
	// Dedupe is the dedupe: key as written (a webhook template, a message
	// regexp), "" = the trigger's natural key.
	Dedupe      string
	Budget      int64 // tokens per session; 0 = H9_SESSION_TOKEN_BUDGET
	DailyBudget int64 // tokens per day across its sessions; 0 = none
	Overlap     Overlap
	// Broken is why a repository's automation cannot start (a webhook
	// secret that is not set): each occurrence fails with it.
	Broken string

	schedule   *Schedule
	task       *template.Template // webhook: the task's template
	dedupeTmpl *template.Template // webhook: the dedupe template
	dedupeRE   *regexp.Regexp     // message: the dedupe regexp
	match      *regexp.Regexp     // message: the match regexp
	secret     []byte             // webhook: the secret, read at load
}

// Source is where an automation is defined.
type Source struct {
	// File is what error messages and listings name: the operator's file's
	// path, or "<repo>/.h9/automations.yaml".
	File string
	// Repo is the repository whose file it is, "" for the operator's.
	Repo string
}

// Mode is what its sessions do first.
type Mode string

const (
	ModePlan Mode = "plan" // plans, then the review buttons wait for the owner
	ModeRun  Mode = "run"  // skips planning, as /h9 run
)

// Overlap is what an occurrence does while the automation's previous
// session is open.
type Overlap string

const (
	OverlapSkip  Overlap = "skip"
	OverlapQueue Overlap = "queue"
)

// Kind names a trigger.
type Kind string

const (
	KindSchedule Kind = "schedule"
	KindIssue    Kind = "issue"
	KindCheck    Kind = "check"
	KindMessage  Kind = "message"
	KindWebhook  Kind = "webhook"
)

// Kinds lists the triggers, for metrics and listings.
func Kinds() []Kind { return []Kind{KindSchedule, KindIssue, KindCheck, KindMessage, KindWebhook} }

// Trigger is the on: map's one trigger.
type Trigger struct {
	Kind Kind
	// Schedule is the 5-field cron line (schedule).
	Schedule string
	// Label and Assigned: an issue gains the label, or is assigned to h9's
	// forge user (issue).
	Label    string
	Assigned bool
	// Branch is the branch whose head's checks are watched; "" = the
	// repository's default branch (check).
	Branch string
	// Watch, From and Match: a message in Watch from one of From (user
	// IDs, bot IDs or bot user IDs) whose text matches Match (message).
	Watch string
	From  []string
	Match string
	// SecretEnv names the variable holding the webhook's secret (webhook).
	SecretEnv string
}

// Describe is the trigger in a few words, for listings: "schedule 0 9 * * 1
// (Europe/Paris)", "issue labelled h9", "webhook".
func (a *Automation) Describe() string {
	t := a.Trigger
	switch t.Kind {
	case KindSchedule:
		return fmt.Sprintf("schedule `%s` (%s)", t.Schedule, a.Zone)
	case KindIssue:
		if t.Assigned {
			return "issue assigned to h9"
		}
		return "issue labelled " + t.Label
	case KindCheck:
		return "failing check on " + cmpOr(t.Branch, "the default branch")
	case KindMessage:
		return "message in <#" + t.Watch + "> matching `" + t.Match + "`"
	case KindWebhook:
		return "webhook"
	}
	return string(t.Kind)
}

// Next is the schedule's next occurrence after t (zero for other
// triggers, or a schedule that never comes).
func (a *Automation) Next(t time.Time) time.Time {
	if a.schedule == nil {
		return time.Time{}
	}
	return a.schedule.Next(t)
}

// Schedule is the compiled schedule, nil for other triggers.
func (a *Automation) Schedule() *Schedule { return a.schedule }

// Webhook reports whether name is this automation's webhook path segment:
// POST /hooks/<name> (a repository's: /hooks/<repo>/<name>).
func (a *Automation) Webhook() bool { return a.Trigger.Kind == KindWebhook }

// Day is the day a time falls on in the automation's zone (YYYY-MM-DD):
// the unit of daily_budget.
func (a *Automation) Day(t time.Time) string { return t.In(a.zone()).Format(time.DateOnly) }

func (a *Automation) zone() *time.Location {
	if a.Zone == nil {
		return time.UTC
	}
	return a.Zone
}

var (
	nameRE      = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
	channelRE   = regexp.MustCompile(`^[CG][A-Z0-9]+$`)
	userRE      = regexp.MustCompile(`^[UW][A-Z0-9]+$`)
	senderRE    = regexp.MustCompile(`^[UWB][A-Z0-9]+$`)
	envNameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	branchBadRE = regexp.MustCompile(`[\x00-\x20~^:?*\[\\]|\.\.|@\{|^/|/$|^-`)
)

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
