package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/h9-app/h9/bot"
)

// redacted replaces any secret found in a log line or a doctor finding.
const redacted = "[REDACTED]"

// minSecretLen: shorter values would blank out ordinary words; real tokens are long.
const minSecretLen = 8

// newLogger builds the process logger: text or JSON on w, at the given level, with every
// occurrence of a secret replaced wherever it appears. bot and agent never log tokens on
// purpose; this catches the accidental cases (a library error quoting a request).
func newLogger(w io.Writer, format, level string, s scrubber) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: s.replaceAttr}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(sessionHandler{h: h})
}

// scrubber removes known secret values from text; marks[i] is what
// replaces secrets[i].
type scrubber struct{ secrets, marks []string }

func newScrubber(secrets ...string) scrubber {
	var s scrubber
	for _, v := range secrets {
		s.add(v, redacted)
	}
	return s
}

// add scrubs v as mark, unless v is too short to be a secret.
func (sc *scrubber) add(v, mark string) {
	if len(v) >= minSecretLen {
		sc.secrets, sc.marks = append(sc.secrets, v), append(sc.marks, mark)
	}
}

// secretsOf lists the configuration values that must never be printed.
func secretsOf(c Config) scrubber {
	values := append(mcpHeaderValues(c), c.SlackBotToken, c.SlackAppToken, c.OpenAIAPIKey, c.GithubToken, c.DatabaseURL, databasePassword(c.DatabaseURL))
	values = append(values, c.forgeSecrets()...)
	sc := newScrubber(values...)
	// The repositories' setup secrets by name, as the workspace shows
	// them in command output (ARCHITECTURE.md, "Network for the agent").
	// First, so a value that is also h9's own secret reads by its name;
	// whatever their length, as in command output (a repository chose to
	// name them).
	var named scrubber
	for n, v := range c.secrets {
		if v != "" {
			named.secrets, named.marks = append(named.secrets, v), append(named.marks, "[REDACTED:"+n+"]")
		}
	}
	named.secrets, named.marks = append(named.secrets, sc.secrets...), append(named.marks, sc.marks...)
	return named
}

// databasePassword is the password in a postgres:// URL ("" when none).
func databasePassword(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// scrub returns s with every secret replaced, and whether anything was.
func (sc scrubber) scrub(s string) (string, bool) {
	changed := false
	for i, secret := range sc.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, sc.marks[i])
			changed = true
		}
	}
	return s, changed
}

// String scrubs s.
func (sc scrubber) String(s string) string {
	out, _ := sc.scrub(s)
	return out
}

// replaceAttr is a slog ReplaceAttr. slog calls it for the message too, and for
// every member of a group.
func (sc scrubber) replaceAttr(_ []string, a slog.Attr) slog.Attr {
	if len(sc.secrets) == 0 {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s, ok := sc.scrub(v.String()); ok {
			a.Value = slog.StringValue(s)
		}
	case slog.KindAny:
		// errors, URLs, structs: judge them by how they would be printed.
		if s, ok := sc.scrub(fmt.Sprint(v.Any())); ok {
			a.Value = slog.StringValue(s)
		}
	}
	return a
}

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
