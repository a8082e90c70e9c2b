package bot

import (
	"context"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// socketLoop reads the socket client's events. Each envelope is acked
// first; what follows is cheap routing (parsing, dedup, an inbox append) or
// a new goroutine, never a Web API call or a run on this loop.
func (b *Bot) socketLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case evt, ok := <-b.sm.Events:
			if !ok {
				return
			}
			b.onSocketEvent(evt)
		}
	}
}

func (b *Bot) onSocketEvent(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			b.ack(evt.Request, nil)
			return
		}
		reply, work := b.commandAck(cmd)
		b.ack(evt.Request, reply)
		if work && b.firstEnvelope(evt.Request) {
			go b.afterAck(func() { b.runCommand(cmd) })
		}
	case socketmode.EventTypeEventsAPI:
		b.ack(evt.Request, nil)
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
			b.onEventsAPI(ev, evt.Request)
		}
	case socketmode.EventTypeInteractive:
		b.ack(evt.Request, nil)
		cb, ok := evt.Data.(slack.InteractionCallback)
		if ok && b.firstEnvelope(evt.Request) {
			b.onInteraction(cb)
		}
	case socketmode.EventTypeConnected:
		b.log.Info("socket mode connected")
	case socketmode.EventTypeConnecting:
		b.log.Debug("socket mode connecting")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		b.log.Warn("socket mode error", "type", evt.Type, "data", evt.Data)
	case socketmode.EventTypeInvalidAuth:
		b.log.Error("socket mode: invalid app token")
	case socketmode.EventTypeDisconnect:
		b.log.Info("socket mode: Slack asked to reconnect")
	}
}

// ack answers an envelope; payload is nil or a slash command's response.
func (b *Bot) ack(req *socketmode.Request, payload any) {
	if req == nil || req.EnvelopeID == "" {
		return
	}
	var err error
	if payload == nil {
		err = b.sm.Ack(*req)
	} else {
		err = b.sm.Ack(*req, payload)
	}
	if err != nil {
		b.log.Error("ack failed", "envelope", req.EnvelopeID, "err", err)
	}
}

// firstEnvelope drops a redelivered envelope (same envelope id).
func (b *Bot) firstEnvelope(req *socketmode.Request) bool {
	if req == nil {
		return true
	}
	return b.seen.first("env:" + req.EnvelopeID)
}

// afterAck runs a command's work once a slot is free. Bounding this work
// keeps the socket's goroutines from competing with hundreds of runnable
// ones during a burst of commands, so acks stay fast; the work only waits.
func (b *Bot) afterAck(f func()) {
	b.ackWork <- struct{}{}
	defer func() { <-b.ackWork }()
	f()
}
