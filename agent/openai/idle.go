package openai

import (
	"context"
	"errors"
	"io"
	"time"
)

// watchdog cancels a request once the endpoint has sent nothing for its
// idle time: before the first byte, or between two reads of the body. A
// streamed answer that keeps coming may take as long as it needs, which
// one timeout over the whole request could not allow.
//
// A request still receiving after its whole time (MaxRequest) is cut all
// the same: an endpoint trickling a byte now and then must not hold a run
// for ever (ARCHITECTURE.md, "Lifetimes and deadlines").
type watchdog struct {
	idle   time.Duration
	timer  *time.Timer
	whole  *time.Timer // the whole request's bound
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// DefaultMaxRequest bounds one model request from its start to the last
// byte of its answer (Config.MaxRequest's default). The longest honest
// answer (a full completion budget streamed by a slow local model at a few
// tokens a second) takes minutes; half an hour is far past it and still
// frees a stuck run.
const DefaultMaxRequest = 30 * time.Minute

func watch(ctx context.Context, idle, whole time.Duration) (context.Context, *watchdog) {
	wctx, cancel := context.WithCancelCause(ctx)
	d := &watchdog{idle: idle, ctx: wctx, cancel: cancel}
	d.timer = time.AfterFunc(idle, func() { cancel(&idleError{after: idle}) })
	d.whole = time.AfterFunc(whole, func() { cancel(&idleError{after: whole, whole: true}) })
	return wctx, d
}

func (d *watchdog) stop() {
	d.timer.Stop()
	d.whole.Stop()
	d.cancel(nil)
}

// reader resets the timer on every read that brings data.
func (d *watchdog) reader(r io.Reader) io.Reader { return &kickReader{r: r, d: d} }

type kickReader struct {
	r io.Reader
	d *watchdog
}

func (k *kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.d.timer.Reset(k.d.idle)
	}
	return n, err
}

// explain turns the cancellation the watchdog caused into its idleError;
// a cancellation of the caller's own context stays what it was.
func (d *watchdog) explain(parent context.Context, err error) error {
	if err == nil || parent.Err() != nil {
		return err
	}
	var ie *idleError
	if errors.As(context.Cause(d.ctx), &ie) {
		return ie
	}
	return err
}
