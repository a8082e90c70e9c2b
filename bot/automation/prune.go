package automation

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// Pruning (ARCHITECTURE.md, "Automations"): every occurrence is a record,
// so without pruning a schedule, a webhook or a channel grows the store
// forever. A settled occurrence (started, failed, skipped, deduplicated;
// never a recorded or queued one) is forgotten once it is older than
// keepOccurrences, far past every repeat of its key that can still come:
//
//   - schedule: its key is its time; the timer fires only times to come,
//     and a catch-up only the latest time missed after the state's
//     watermark, if under 24 h old.
//   - webhook: a body-hash key holds the signed timestamp, refused 5
//     minutes on (HookHandler); a dedupe key repeats whenever the sender
//     likes, but a repeat of a closed session's key fires anew whether or
//     not the record is there, and one whose session is open is kept.
//   - message: Slack redelivers an event within minutes; a dedupe key is
//     kept while its session is open, as a webhook's.
//   - issue: the polling cursor in the state gives each event once, and
//     an event older than keepIssueEvents is never fired (fireIssue), so
//     a cursor read anew cannot bring back one whose record is gone.
//   - check: the cursor gives each failing check of a head once; the
//     head is the dedupe key, kept while its session is open, and a new
//     failure of a head whose session closed fires anew either way.
//
// So an occurrence that names a thread is kept while that thread's
// session is open (and when the bot cannot say), and the others go by
// age alone. Forgetting is compare-and-swap on each record's version: a
// repeat that took one anew meanwhile keeps it.
const (
	keepOccurrences = 30 * 24 * time.Hour
	// keepIssueEvents: an issue event older than this is not fired (a
	// day under keepOccurrences, for the forge's clock against h9's).
	keepIssueEvents = keepOccurrences - 24*time.Hour
	// pruneEvery paces the passes, one per replica (the sweep calls it);
	// a pass that ends with work left goes on at the next sweep.
	pruneEvery = time.Hour
	// pruneBatch occurrences are listed and forgotten at once (one read,
	// one write), up to pruneBatches in a pass.
	pruneBatch   = 500
	pruneBatches = 20
)

// pruning is where the passes are.
type pruning struct {
	mu sync.Mutex
	// next is when the next pass may run (zero: now).
	next time.Time
	// from: the occurrences recorded before it were forgotten or kept
	// open by the last passes, which stopped with work left.
	from time.Time
	// batch and batches override pruneBatch and pruneBatches (tests).
	batch, batches int
}

// prune forgets settled occurrences older than keepOccurrences, if a
// pass is due; it returns how many.
func (e *Engine) prune(ctx context.Context) int {
	now := e.o.Now()
	p := &e.prunes
	p.mu.Lock()
	if now.Before(p.next) {
		p.mu.Unlock()
		return 0
	}
	p.next = now.Add(pruneEvery)
	from, batch, batches := p.from, cmp.Or(p.batch, pruneBatch), cmp.Or(p.batches, pruneBatches)
	p.mu.Unlock()
	before := now.Add(-keepOccurrences)
	open := map[string]bool{} // each thread asked once a pass
	forgot, full := 0, false
	for range batches {
		cctx, cancel := e.ctx(ctx)
		list, err := e.o.Store.SettledOccurrences(cctx, from, before, batch)
		cancel()
		if err != nil {
			e.o.Log.Warn("listing old occurrences failed", "err", err)
			return forgot
		}
		var gone []store.Occurrence
		for _, o := range list {
			if o.Thread == "" || !e.threadOpen(ctx, open, o.Channel, o.Thread) {
				gone = append(gone, o)
			}
		}
		if len(gone) > 0 {
			cctx, cancel := e.ctx(ctx)
			n, err := e.o.Store.ForgetOccurrences(cctx, gone)
			cancel()
			if err != nil {
				e.o.Log.Warn("forgetting old occurrences failed", "err", err)
				return forgot
			}
			forgot += n
		}
		if full = len(list) == batch; !full {
			from = time.Time{}
			break
		}
		from = list[len(list)-1].Recorded
	}
	p.mu.Lock()
	p.from = from
	if full {
		p.next = now // work left: the next sweep goes on
	}
	p.mu.Unlock()
	if forgot > 0 {
		e.o.Log.Info("forgot old automation occurrences", "count", forgot, "before", before)
	}
	return forgot
}

// threadOpen reports whether the session in the thread is open, true when
// the bot cannot say; asked remembers the answers of one pass.
func (e *Engine) threadOpen(ctx context.Context, asked map[string]bool, channel, thread string) bool {
	k := channel + "/" + thread
	if open, ok := asked[k]; ok {
		return open
	}
	cctx, cancel := e.ctx(ctx)
	open, err := e.o.Bot.SessionOpen(cctx, channel, thread)
	cancel()
	if err != nil {
		e.o.Log.Warn("asking whether a session is open failed; its occurrences are kept", "err", err)
		open = true
	}
	asked[k] = open
	return open
}
