package bot

import (
	"context"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// socketLoop handles the socket client's events in order. Each envelope
// is acked first; what follows is cheap routing (parsing, dedup, an inbox
// append) or a new goroutine, never a Web API call or a run on this loop.
// With metrics, the events come stamped by receive; without, straight
// from the client (one goroutine hop less per event).
func (b *Bot) socketLoop(ctx context.Context) {
	direct, stamped := b.sm.Events, chan receivedEvent(nil)
	if _, off := b.metrics.(noMetrics); !off {
		direct, stamped = nil, make(chan receivedEvent, receiveQueue)
		b.tasks.spawn(func() { b.receive(ctx, stamped) })
	}
	for {
		select {
		case <-ctx.Done():
			return
		case evt, ok := <-direct:
			if !ok {
				return
			}
			b.onSocketEvent(evt, time.Now())
		case r, ok := <-stamped:
			if !ok {
				return
			}
			b.onSocketEvent(r.evt, r.at)
		}
	}
}

// receivedEvent is a socket client event and when h9 took it from the client.
type receivedEvent struct {
	evt socketmode.Event
	at  time.Time
}

// receiveQueue bounds the events taken from the client and not yet
// handled. The client's own buffer is 50; past that it stops reading.
const receiveQueue = 4096

// receive takes each event off the socket client as soon as the client
// has parsed it and stamps it, so that an envelope's ack latency includes
// its wait for the socket loop (under a burst, nearly all of it: see
// BENCHMARKS.md, "Issue 16: metrics and health (`H9_HTTP_ADDR`) (2026-12-01)").
func (b *Bot) receive(ctx context.Context, out chan<- receivedEvent) {
	defer close(out)
	for {
		select {
		case <-ctx.Done():
			return
		case evt, ok := <-b.sm.Events:
			if !ok {
				return
			}
			select {
			case out <- receivedEvent{evt: evt, at: time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// onSocketEvent handles one event of the socket client; received is when
// h9 took it from the client, where an envelope's ack latency starts.
func (b *Bot) onSocketEvent(evt socketmode.Event, received time.Time) {
	switch evt.Type {
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			b.ack(evt, received, nil)
			return
		}
		reply, work := b.commandAck(cmd)
		b.ack(evt, received, reply)
		if work {
			b.admit(envelopeKind(evt.Request), envelopeKeys(evt.Request), func() { b.afterAck(func() { b.runCommand(cmd) }) })
		}
	case socketmode.EventTypeEventsAPI:
		b.ack(evt, received, nil)
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
			b.onEventsAPI(ev, evt.Request)
		}
	case socketmode.EventTypeInteractive:
		b.ack(evt, received, nil)
		if cb, ok := evt.Data.(slack.InteractionCallback); ok {
			b.admit(envelopeKind(evt.Request), envelopeKeys(evt.Request), func() { b.onInteraction(cb) })
		}
	default:
		b.onConnectionEvent(evt)
	}
}

// onConnectionEvent follows the connection's state for Connected.
func (b *Bot) onConnectionEvent(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		b.log.Info("socket mode connected")
	case socketmode.EventTypeHello:
		b.connected.Store(true) // Slack delivers from its hello on
		b.log.Debug("socket mode: Slack said hello")
	case socketmode.EventTypeConnecting:
		b.connected.Store(false) // a new attempt: the last connection is gone
		b.log.Debug("socket mode connecting")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		b.log.Warn("socket mode error", "type", evt.Type, "data", evt.Data)
	case socketmode.EventTypeInvalidAuth:
		b.connected.Store(false)
		b.log.Error("socket mode: invalid app token")
	case socketmode.EventTypeDisconnect:
		b.connected.Store(false)
		b.log.Info("socket mode: Slack asked to reconnect")
	}
}

// ack answers an envelope; payload is nil or a slash command's response.
// Its latency runs from received to the ack handed to the connection.
func (b *Bot) ack(evt socketmode.Event, received time.Time, payload any) {
	req := evt.Request
	if req == nil || req.EnvelopeID == "" {
		return
	}
	var err error
	if payload == nil {
		err = b.sm.Ack(*req)
	} else {
		err = b.sm.Ack(*req, payload)
	}
	b.metrics.EnvelopeAcked(string(evt.Type), time.Since(received), err != nil)
	if err != nil {
		b.log.Error("ack failed", "envelope", req.EnvelopeID, "err", err)
	}
}

// envelopeKeys are the dedup keys of an envelope: its id, which a
// redelivery repeats.
func envelopeKeys(req *socketmode.Request) []string {
	if req == nil || req.EnvelopeID == "" {
		return nil
	}
	return []string{"env:" + req.EnvelopeID}
}

// envelopeKind is req's type as a metric names it: one of the three
// envelope types the socket loop handles.
func envelopeKind(req *socketmode.Request) string {
	if req == nil {
		return "other"
	}
	switch t := socketmode.EventType(req.Type); t {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		return string(t)
	}
	return "other"
}

// afterAck admits work to do after an envelope's ack: it waits in the
// work queue for one of ackWorkers workers. Bounding this work keeps the
// socket's goroutines from competing with hundreds of runnable ones during
// a burst of commands, so acks stay fast; the work only waits, and no
// goroutine is started for it. Work that arrives once shutdown has closed
// the queue is dropped and logged (the socket loop has stopped by then).
func (b *Bot) afterAck(f func()) {
	if !b.work.add(f) {
		b.log.Warn("shutting down: dropped work admitted after the socket loop stopped")
	}
}
