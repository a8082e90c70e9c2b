package main

import (
	"context"
	"log/slog"

	"github.com/h9-app/h9/bot"
)

// sessionHandler adds channel and thread to any record that names a session
// ("team/channel/thread") without them. The bot tags its lines itself; the
// agent knows nothing of Slack and logs only the session id, so this keeps
// "every line about a session carries session, channel and thread" true in
// one place.
type sessionHandler struct {
	h slog.Handler
	// tagged: this handler's With attributes already carry channel and thread.
	tagged bool
}

func (s sessionHandler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s sessionHandler) WithAttrs(as []slog.Attr) slog.Handler {
	tagged := s.tagged
	if !tagged {
		var extra []slog.Attr
		extra, tagged = sessionAttrs(as)
		as = append(as, extra...)
	}
	return sessionHandler{h: s.h.WithAttrs(as), tagged: tagged}
}

// WithGroup: attributes inside a group are not top-level, so stop deriving.
func (s sessionHandler) WithGroup(name string) slog.Handler {
	return sessionHandler{h: s.h.WithGroup(name), tagged: true}
}

func (s sessionHandler) Handle(ctx context.Context, r slog.Record) error {
	if !s.tagged {
		var as []slog.Attr
		r.Attrs(func(a slog.Attr) bool { as = append(as, a); return true })
		if extra, _ := sessionAttrs(as); len(extra) > 0 {
			r = r.Clone()
			r.AddAttrs(extra...)
		}
	}
	return s.h.Handle(ctx, r)
}

// sessionAttrs returns the channel/thread attributes missing from as when as
// names a session, and whether as then carries all three.
func sessionAttrs(as []slog.Attr) (extra []slog.Attr, tagged bool) {
	var id string
	var hasChannel, hasThread bool
	for _, a := range as {
		switch a.Key {
		case "session":
			id = a.Value.String()
		case "channel":
			hasChannel = true
		case "thread":
			hasThread = true
		}
	}
	if id == "" {
		return nil, false
	}
	_, channel, thread, ok := bot.ParseSessionID(id)
	if !ok {
		return nil, false
	}
	if !hasChannel {
		extra = append(extra, slog.String("channel", channel))
	}
	if !hasThread {
		extra = append(extra, slog.String("thread", thread))
	}
	return extra, true
}
