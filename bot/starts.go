package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// A new session's start (ARCHITECTURE.md, "Lifetimes and deadlines"): a
// session is keyed by its thread, so its record cannot be stored before
// its root message is posted. /h9 plan and run therefore record the
// command first (a store.Start), post the root message carrying the
// start's ID in a block ID, and forget the start once the record is first
// stored. A process stopped in between leaves the start, which the next
// sweep finishes: it looks for the root message in the channel by that
// ID and gives the session to its thread, or posts the root message if it
// never was. A start is taken by the first sweep when an earlier process
// recorded it (alone, nobody else is in flight), otherwise only once it is
// older than startSweepAge (no command's in flight), and in a fleet by
// one replica.

const (
	// startSweepEvery is how often a replica looks for starts left behind.
	startSweepEvery = time.Minute
	// startSweepAge is how old a start must be before a sweep takes it
	// while its command may still be in flight: past that command's
	// deadlines (the store's, then the root post's callTimeout, 2 min).
	startSweepAge = 5 * time.Minute
	// startGiveUp: a start this old that still cannot be finished (the
	// channel archived, h9 removed from it) is dropped, with a log line.
	startGiveUp = 24 * time.Hour
)

// startData is what a start keeps of its command.
type startData struct {
	Team  string            `json:"team"`
	Owner string            `json:"owner"`
	Task  string            `json:"task"`
	Mode  planning.PlanMode `json:"mode"`
	Repo  *SessionRepo      `json:"repo,omitempty"`
	// Automation names the automation that started it (automations.go).
	Automation *automationRoot `json:"automation,omitempty"`
	Budget     int             `json:"budget,omitempty"` // the automation's budget:
}

func (d startData) create(id string) msgCreate {
	return msgCreate{team: d.Team, owner: d.Owner, task: d.Task, mode: d.Mode, repo: d.Repo, start: id, budget: d.Budget}
}

// recordStart stores a new session's command before its root message.
func (b *Bot) recordStart(channel string, d startData) (store.Start, error) {
	id := make([]byte, 8)
	rand.Read(id)
	data, err := json.Marshal(d)
	if err != nil {
		return store.Start{}, err
	}
	st := store.Start{ID: hex.EncodeToString(id), Channel: channel, At: time.Now(), Data: data}
	return st, b.store.PutStart(b.bg, st)
}

// forgetStart drops a start whose session is stored (or never will be);
// a failure leaves it to a sweep, which finds the session and drops it.
func (b *Bot) forgetStart(log *slog.Logger, id string) {
	if err := b.store.DeleteStart(b.bg, id); err != nil {
		log.Warn("forgetting a finished start failed; a later sweep drops it", "start", id, "err", err)
	}
}

// startsLoop finishes starts left behind: at once those an earlier
// process recorded (before began; in a fleet, only the old enough), then
// every startSweepEvery the old enough.
func (b *Bot) startsLoop(ctx context.Context, began time.Time) {
	oldEnough := func(st store.Start) bool { return time.Since(st.At) >= startSweepAge }
	first := func(st store.Start) bool { return st.At.Before(began) }
	if b.fleet != nil {
		first = oldEnough
	}
	b.finishStarts(ctx, first)
	t := time.NewTicker(startSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.finishStarts(ctx, oldEnough)
		}
	}
}

// finishStarts finishes each start take accepts.
func (b *Bot) finishStarts(ctx context.Context, take func(store.Start) bool) {
	starts, err := b.store.Starts(ctx)
	if err != nil {
		b.log.Warn("listing starts left behind failed; trying again later", "err", err)
		return
	}
	for _, st := range starts {
		if ctx.Err() != nil {
			return
		}
		if take(st) && b.mayFinish(ctx, st) {
			b.finishStart(ctx, st)
		}
	}
}

// mayFinish claims st for this replica (in a fleet) for one sweep's
// while: a replica that dies finishing it leaves it to a later sweep.
func (b *Bot) mayFinish(ctx context.Context, st store.Start) bool {
	if b.fleet == nil {
		return true
	}
	window := time.Now().UTC().Truncate(startSweepAge).Format(time.RFC3339)
	fresh, err := b.store.Claim(ctx, []string{"start:" + st.ID + ":" + window}, time.Now())
	return err == nil && len(fresh) == 1 && fresh[0]
}

// finishStart gives st's session to the thread its root message began,
// posting that message if it never was.
func (b *Bot) finishStart(ctx context.Context, st store.Start) {
	log := b.log.With("channel", st.Channel, "start", st.ID)
	var d startData
	if err := json.Unmarshal(st.Data, &d); err != nil {
		log.Error("a start left behind does not decode; dropping it", "err", err)
		b.forgetStart(log, st.ID)
		return
	}
	ts, err := b.api.FindInChannel(ctx, log, st.Channel, st.At.Add(-time.Minute), func(m slack.Message) bool {
		return render.RootStart(m) == st.ID
	})
	if err == nil && ts == "" {
		if b.leftToEngine(ctx, log, st, d) {
			return
		}
		root := render.WithStart(rootMessage(d), st.ID)
		ts, err = b.api.PostMessage(ctx, log, st.Channel, "", root)
	}
	if err != nil {
		if time.Since(st.At) > startGiveUp {
			log.Error("a start left behind could not be finished in a day; dropping it", "err", err, "task", d.Task)
			b.forgetStart(log, st.ID)
			return
		}
		log.Warn("finishing a start left behind failed; trying again later", "err", err)
		return
	}
	key := threadKey{channel: st.Channel, ts: ts}
	switch _, err := b.store.FindThread(ctx, st.Channel, ts); {
	case err == nil: // its first commit landed; only the start was left
		b.forgetStart(log, st.ID)
	case errors.Is(err, store.ErrNotFound):
		log.Info("finishing a session's start left behind by a stopped process", "thread", ts)
		c := d.create(st.ID)
		c.swept = true
		b.reg.deliver(key, c)
	default:
		log.Warn("finishing a start left behind failed; trying again later", "err", err)
	}
}

// rootMessage is the channel message that begins d's session.
func rootMessage(d startData) render.Message {
	root := render.RenderRoot(d.Owner, d.Task, d.Mode)
	if d.Automation != nil {
		root = automationRootMessage(d)
	}
	if d.Repo != nil {
		root = render.WithRepo(root, d.Repo.line())
	}
	return root
}
