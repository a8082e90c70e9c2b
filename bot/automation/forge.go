package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/workspace/forge"
)

// Issue and check triggers (ARCHITECTURE.md, "Automations"): polled every
// H9_FORGE_POLL with the forge's conditional requests; the poll's cursor
// is kept in the automation's state, so a restart or another replica goes
// on from it. Every event is an occurrence, recorded once; in a fleet one
// replica polls each repository each period (claimTurn), and should two
// poll, the occurrences' keys still start each event once.

// Forges gives a repository's forge API (nil: issue and check triggers
// do nothing).
type Forges interface {
	Forge(repo string) (forge.Client, error)
}

// DefaultPoll is how often the forge triggers poll when Options.Poll is 0.
const DefaultPoll = 60 * time.Second

// forgeCursor is what the state's Cursor holds for a forge trigger.
type forgeCursor struct {
	Cursor forge.Cursor `json:"cursor"`
}

// pollForges polls every issue and check trigger once, the repositories
// this replica claims for this poll (claimTurn): in a fleet, one replica
// polls each repository each H9_FORGE_POLL.
func (e *Engine) pollForges(ctx context.Context) {
	if e.o.Forges == nil {
		return
	}
	claimed := map[string]bool{}
	for _, a := range e.All() {
		if a.Trigger.Kind != KindIssue && a.Trigger.Kind != KindCheck {
			continue
		}
		turn, asked := claimed[a.Repo]
		if !asked {
			turn = e.claimTurn(ctx, "poll:"+a.Repo, e.o.Poll)
			claimed[a.Repo] = turn
		}
		if !turn {
			continue
		}
		if err := e.pollOne(ctx, a); err != nil {
			e.pollFailed(ctx, a, err)
		}
	}
}

// claimTurn reports whether this replica does the work named name for the
// current period of length every (the periods are the clock's, the same
// on every replica): the first replica to write the period into name's
// record in the store does it, and the others leave it to that one. The
// work must be safe to do twice (its occurrences are keyed): when the
// store cannot say, the turn is taken.
func (e *Engine) claimTurn(ctx context.Context, name string, every time.Duration) bool {
	if e.everyTurn {
		return true
	}
	period := e.o.Now().Truncate(every)
	st, err := e.state(ctx, name)
	if err != nil {
		e.o.Log.Warn("reading a poll's turn failed; polling anyway", "turn", name, "err", err)
		return true
	}
	if !st.LastFired.Before(period) {
		return false // another replica's (or this one's) turn already
	}
	st.LastFired, st.LastKey = period, e.o.Replica
	cctx, cancel := e.ctx(ctx)
	_, err = e.o.Store.PutAutomationState(cctx, st)
	cancel()
	switch {
	case errors.Is(err, store.ErrConflict):
		return false // another replica took it first
	case err != nil:
		e.o.Log.Warn("claiming a poll's turn failed; polling anyway", "turn", name, "err", err)
	}
	return true
}

func (e *Engine) pollOne(ctx context.Context, a *Automation) error {
	st, err := e.state(ctx, a.Name)
	if err != nil {
		return err
	}
	if st.FirstLoaded.IsZero() {
		// First load: nothing that happened before counts (no backfill).
		first := false
		_, err := e.editState(ctx, a.Name, func(s *store.AutomationState) {
			if first = s.FirstLoaded.IsZero(); first {
				s.FirstLoaded = e.o.Now()
			}
		})
		if err == nil && first {
			e.o.Log.Info("automation first loaded: only what happens on its forge from now on starts it", "automation", a.Name)
		}
		return err
	}
	c, err := e.o.Forges.Forge(a.Repo)
	if err != nil {
		return err
	}
	var cur forgeCursor
	if len(st.Cursor) > 0 {
		_ = json.Unmarshal(st.Cursor, &cur)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var next forge.Cursor
	if a.Trigger.Kind == KindIssue {
		trig := forge.IssueTrigger{Label: a.Trigger.Label}
		if a.Trigger.Assigned {
			trig = forge.IssueTrigger{Assigned: forge.AssignedToMe}
		}
		var events []forge.IssueEvent
		if events, next, err = c.IssueEvents(cctx, trig, st.FirstLoaded, cur.Cursor); err != nil {
			return err
		}
		for _, ev := range events {
			e.fireIssue(ctx, a, c, ev)
		}
		e.sayIssueClosed(ctx, a, c)
	} else {
		var head string
		var failed []forge.Check
		if head, failed, next, err = c.BranchChecks(cctx, a.Trigger.Branch, cur.Cursor); err != nil {
			return err
		}
		if len(failed) > 0 {
			e.fireChecks(ctx, a, head, failed)
		}
	}
	data, err := json.Marshal(forgeCursor{Cursor: next})
	if err != nil {
		return err
	}
	_, err = e.editState(ctx, a.Name, func(s *store.AutomationState) { s.Cursor = data })
	return err
}

// fireIssue starts a session for an issue event from a writer; one from
// anybody else is left out, said once in the channel.
func (e *Engine) fireIssue(ctx context.Context, a *Automation, c forge.Issues, ev forge.IssueEvent) {
	if !ev.At.IsZero() && ev.At.Before(e.o.Now().Add(-keepIssueEvents)) {
		// Its record may be pruned (prune.go): a cursor read anew must
		// not start it again.
		e.o.Log.Info("an issue event too old to start a session is left out", "automation", a.Name, "issue", ev.Number, "at", ev.At)
		return
	}
	if !ev.ActorCanPush {
		rec := store.Occurrence{Automation: a.Name, Key: boundKey(ev.Key), State: store.OccurrenceSkipped, Recorded: e.o.Now(), Owner: e.o.Replica,
			Cause: ev.Actor + " cannot write to " + a.Repo}
		cctx, cancel := e.ctx(ctx)
		_, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
		cancel()
		if err == nil && inserted {
			e.o.Count(a.Name, KindIssue, ResultSkipped)
			e.post(ctx, a, fmt.Sprintf("*%s* left out issue #%d: %s, who %s it, cannot write to %s.", a.Name, ev.Number,
				slackEscape(ev.Actor), map[bool]string{true: "assigned", false: "labelled"}[a.Trigger.Assigned], a.Repo), "")
		}
		return
	}
	key := boundKey(ev.Key)
	req := e.newRequest(a, key)
	req.Source = "issue #" + strconv.Itoa(ev.Number) + " " + ev.URL
	req.Issue = ev.Number // h9 writes `Closes #N` in the request it opens (bot/repo_actor.go)
	req.Request = Request(a.Task, DataIssue, issueData(ev))
	out, err := e.fire(ctx, occurrence{a: a, key: key, req: req})
	if err != nil {
		e.o.Log.Warn("recording an issue's occurrence failed", "automation", a.Name, "issue", ev.Number, "err", err)
		return
	}
	if out.Result == ResultStarted && out.Link != "" {
		cctx, cancel := e.ctx(ctx)
		defer cancel()
		if err := c.CommentOnIssue(cctx, ev.Number, "h9 is working on this in Slack: "+out.Link); err != nil {
			e.o.Log.Warn("commenting on an issue failed", "automation", a.Name, "issue", ev.Number, "err", err)
		}
	}
}

// issueData is an issue event's data for the fence: the issue, then its
// comments oldest first, each with its author; every word of it is data.
func issueData(ev forge.IssueEvent) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "issue #%d: %s\nopened at %s\n\n%s\n", ev.Number, ev.Title, ev.URL, ev.Body)
	if len(ev.Comments) == 0 && ev.CommentsLeftOut == 0 {
		return sb.String()
	}
	fmt.Fprintf(&sb, "\ncomments (%d, oldest first", len(ev.Comments))
	if ev.CommentsLeftOut > 0 {
		fmt.Fprintf(&sb, "; %d earlier ones left out", ev.CommentsLeftOut)
	}
	sb.WriteString("):\n")
	for i, c := range ev.Comments {
		fmt.Fprintf(&sb, "\n[comment %d] %s", i+1, c.Author)
		if !c.At.IsZero() {
			sb.WriteString(" at " + c.At.UTC().Format(time.RFC3339))
		}
		sb.WriteString(":\n" + c.Body + "\n")
	}
	return sb.String()
}

// fireChecks starts one session per failing head; a failure while the
// automation's session is open goes to that thread instead.
func (e *Engine) fireChecks(ctx context.Context, a *Automation, head string, failed []forge.Check) {
	var names []string
	var data strings.Builder
	for i, c := range failed {
		names = append(names, c.Name)
		fmt.Fprintf(&data, "[check %d] %s: %s\n", i+1, c.Name, c.State)
		if c.URL != "" {
			data.WriteString("link: " + c.URL + "\n")
		}
		if c.Log != "" {
			data.WriteString("log (last lines):\n" + c.Log + "\n")
		}
		data.WriteString("\n")
	}
	key := "check:" + head
	req := e.newRequest(a, key)
	req.Source = "failing checks on " + cmpOr(a.Trigger.Branch, "the default branch") + " at " + shortSHA(head)
	for _, c := range failed {
		if c.URL != "" {
			// The first failing check's run, job or pipeline page; a status's
			// target URL is whatever its poster set, so it is escaped.
			req.Source += " " + slackEscape(c.URL)
			break
		}
	}
	req.Request = Request(a.Task, DataChecks, data.String())
	again := "more checks failed on " + shortSHA(head) + ": " + slackEscape(strings.Join(names, ", "))
	st, err := e.state(ctx, a.Name)
	if err == nil && st.LastThread != "" && st.LastKey != key {
		cctx, cancel := e.ctx(ctx)
		open, err := e.o.Bot.SessionOpen(cctx, st.LastChannel, st.LastThread)
		cancel()
		if err == nil && open {
			rec := store.Occurrence{Automation: a.Name, Key: key + ":" + strings.Join(names, ","), State: store.OccurrenceDeduplicated,
				Channel: st.LastChannel, Thread: st.LastThread, Recorded: e.o.Now(), Owner: e.o.Replica}
			rec.Key = boundKey(rec.Key)
			cctx, cancel := e.ctx(ctx)
			_, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
			cancel()
			if err == nil && inserted {
				e.o.Count(a.Name, KindCheck, ResultDeduplicated)
				cctx, cancel := e.ctx(ctx)
				_ = e.o.Bot.Post(cctx, st.LastChannel, st.LastThread, "Again: "+again, "")
				cancel()
			}
			return
		}
	}
	if _, err := e.fire(ctx, occurrence{a: a, key: key, dedupe: head, req: req, again: again}); err != nil {
		e.o.Log.Warn("recording a check's occurrence failed", "automation", a.Name, "head", head, "err", err)
	}
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// SetForges gives the engine the forges of the issue and check triggers;
// call it before Run.
func (e *Engine) SetForges(f Forges) { e.o.Forges = f }

// sayIssueClosed tells the open session of the automation's last issue,
// once, that the issue was closed meanwhile; the session goes on unless
// someone cancels it.
func (e *Engine) sayIssueClosed(ctx context.Context, a *Automation, c forge.Issues) {
	st, err := e.state(ctx, a.Name)
	if err != nil || st.LastThread == "" || !strings.HasPrefix(st.LastKey, "issue:") {
		return
	}
	n, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(st.LastKey, "issue:"), ":", 2)[0])
	if err != nil {
		return
	}
	cctx, cancel := e.ctx(ctx)
	open, err := e.o.Bot.SessionOpen(cctx, st.LastChannel, st.LastThread)
	cancel()
	if err != nil || !open {
		return
	}
	cctx, cancel = e.ctx(ctx)
	is, err := c.Issue(cctx, n)
	cancel()
	if err != nil || is.State != forge.StateClosed {
		return
	}
	rec := store.Occurrence{Automation: a.Name, Key: "closed:" + strconv.Itoa(n), State: store.OccurrenceSkipped,
		Channel: st.LastChannel, Thread: st.LastThread, Recorded: e.o.Now(), Owner: e.o.Replica, Cause: "the issue was closed"}
	cctx, cancel = e.ctx(ctx)
	_, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
	cancel()
	if err != nil || !inserted {
		return
	}
	cctx, cancel = e.ctx(ctx)
	defer cancel()
	if err := e.o.Bot.Post(cctx, st.LastChannel, st.LastThread, fmt.Sprintf("Issue #%d was closed meanwhile. This session goes on unless someone cancels it.", n), ""); err != nil {
		e.o.Log.Warn("saying an issue was closed failed", "automation", a.Name, "issue", n, "err", err)
	}
}
