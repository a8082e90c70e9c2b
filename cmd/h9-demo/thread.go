package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/h9-app/h9/bot/fakeslack"
)

// threadPrinter prints a thread as a person watching it sees it: each new
// message, each edit (the checklist's, the buttons' replacement), the
// buttons under a message, and the clicks.
type threadPrinter struct {
	slack       *fakeslack.Server
	channel, ts string
	out         io.Writer
	shown       map[string]string // ts → the version last printed
}

func newThreadPrinter(s *fakeslack.Server, channel, root string, out io.Writer) *threadPrinter {
	return &threadPrinter{slack: s, channel: channel, ts: root, out: out, shown: map[string]string{}}
}

// drain prints what changed since the last call.
func (p *threadPrinter) drain() {
	for _, m := range p.slack.Thread(p.channel, p.ts) {
		if m.Ephemeral || m.BotID == "" {
			continue
		}
		version := m.Text + "\x00" + string(m.Blocks)
		prev, seen := p.shown[m.TS]
		if prev == version {
			continue
		}
		p.shown[m.TS] = version
		who := "h9: "
		if seen {
			who = "h9 (edited): "
		}
		fmt.Fprintln(p.out, indent(who, unescape.Replace(m.Text)))
		if now := nowLine(m.Blocks); now != "" {
			fmt.Fprintln(p.out, "    "+now)
		}
		if labels := buttons(m.Blocks); len(labels) > 0 {
			fmt.Fprintln(p.out, "    ["+strings.Join(labels, "] [")+"]")
		}
		fmt.Fprintln(p.out)
	}
}

// waitFor prints the thread until a message shows marker (an action id or
// words) and returns that message's ts.
func (p *threadPrinter) waitFor(ctx context.Context, marker string) (string, error) {
	for {
		p.drain()
		for _, m := range p.slack.Thread(p.channel, p.ts) {
			if strings.Contains(m.Text, marker) || strings.Contains(string(m.Blocks), marker) {
				return m.TS, nil
			}
		}
		if err := pause(ctx); err != nil {
			return "", fmt.Errorf("waiting for %q in the thread: %w", marker, err)
		}
	}
}

// waitGone prints the thread until no message shows marker any more (the
// checklist's Stop button once its last edit has landed).
func (p *threadPrinter) waitGone(ctx context.Context, marker string) error {
	for {
		p.drain()
		shown := false
		for _, m := range p.slack.Thread(p.channel, p.ts) {
			shown = shown || strings.Contains(string(m.Blocks), marker)
		}
		if !shown {
			return nil
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("waiting for %q to leave the thread: %w", marker, err)
		}
	}
}

func (p *threadPrinter) click(ctx context.Context, user, ts, action, label string) error {
	p.drain()
	fmt.Fprintf(p.out, "alice clicks [%s]\n\n", label)
	_, err := p.slack.ClickButton(ctx, user, p.channel, ts, action)
	return err
}

// buttons are the labels of a message's buttons, in order, wherever
// they sit in its blocks.
func buttons(blocks json.RawMessage) []string {
	var v any
	if json.Unmarshal(blocks, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "button" {
				if t, ok := x["text"].(map[string]any); ok {
					out = append(out, fmt.Sprint(t["text"]))
				}
				return
			}
			for _, k := range []string{"elements", "accessory", "blocks"} {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// nowLine is the checklist's Now: line, which only its blocks carry.
func nowLine(blocks json.RawMessage) string {
	var bs []struct {
		BlockID string `json:"block_id"`
		Text    struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return ""
	}
	for _, b := range bs {
		if b.BlockID == "h9_cl_activity" {
			return strings.NewReplacer("*", "", "`", "").Replace(b.Text.Text)
		}
	}
	return ""
}

var unescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "<@"+demoUser+">", "@alice")

func indent(first, text string) string {
	pad := strings.Repeat(" ", len([]rune(first)))
	return first + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n"+pad)
}
