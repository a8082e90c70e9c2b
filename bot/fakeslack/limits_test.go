package fakeslack_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
)

func section(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}})
	return string(b)
}

func button(text, actionID, value string) string {
	b, _ := json.Marshal(map[string]any{"type": "button", "action_id": actionID, "value": value,
		"text": map[string]any{"type": "plain_text", "text": text}})
	return string(b)
}

func blocks(bs ...string) string { return "[" + strings.Join(bs, ",") + "]" }

func repeat(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func postForm(t *testing.T, s *fakeslack.Server, method string, form url.Values) (string, string) {
	t.Helper()
	form.Set("token", "xoxb-test")
	resp, err := http.PostForm(s.APIURL()+method, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		TS    string `json:"ts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Error, body.TS
}

func TestLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) } // characters, not bytes
	ctx := `{"type":"context","elements":[` + strings.Join(repeat(11, `{"type":"mrkdwn","text":"x"}`), ",") + `]}`
	cases := []limitsCase{
		{"plain text", "hi", "", "", ""},
		{"full but legal", long(40000), blocks(append(repeat(49, section(long(3000))),
			`{"type":"header","text":{"type":"plain_text","text":"`+long(150)+`"}}`)...), "", ""},
		{"legal buttons", "", blocks(`{"type":"actions","block_id":"` + long(255) + `","elements":[` +
			button(long(75), long(255), long(2000)) + `]}`), "", ""},
		{"51 blocks", "", blocks(repeat(51, section("x"))...), "invalid_blocks", "51 blocks"},
		{"section text", "", blocks(section(long(3001))), "invalid_blocks", "/blocks/0/text/text"},
		{"empty section text", "", blocks(section("")), "invalid_blocks", "must not be empty"},
		{"header length", "", blocks(`{"type":"header","text":{"type":"plain_text","text":"` + long(151) + `"}}`), "invalid_blocks", "header text is 151"},
		{"header mrkdwn", "", blocks(`{"type":"header","text":{"type":"mrkdwn","text":"x"}}`), "invalid_blocks", "plain_text"},
		{"button text", "", blocks(`{"type":"actions","elements":[` + button(long(76), "a", "v") + `]}`), "invalid_blocks", "button text is 76"},
		{"action_id", "", blocks(`{"type":"actions","elements":[` + button("ok", long(256), "v") + `]}`), "invalid_blocks", "action_id is 256"},
		{"duplicate action_id", "", blocks(`{"type":"actions","elements":[` + button("a", "x", "v") + "," + button("b", "x", "v") + `]}`), "invalid_blocks", "not unique"},
		{"button value", "", blocks(`{"type":"actions","elements":[` + button("ok", "a", long(2001)) + `]}`), "invalid_blocks", "button value is 2001"},
		{"accessory button", "", blocks(`{"type":"section","text":{"type":"mrkdwn","text":"x"},"accessory":` + button(long(76), "a", "v") + `}`), "invalid_blocks", "/blocks/0/accessory/text"},
		{"block_id length", "", blocks(`{"type":"divider","block_id":"` + long(256) + `"}`), "invalid_blocks", "block_id is 256"},
		{"duplicate block_id", "", blocks(`{"type":"divider","block_id":"d"}`, `{"type":"divider","block_id":"d"}`), "invalid_blocks", "not unique within the message"},
		{"context elements", "", blocks(ctx), "invalid_blocks", "11 elements"},
		{"unknown block type", "", blocks(`{"type":"bogus"}`), "invalid_blocks", "unknown block type"},
		{"message text", long(40001), "", "msg_too_long", "40001"},
		{"nothing", "", "", "no_text", "neither text nor blocks"},
		{"empty blocks", "", "[]", "no_text", "neither text nor blocks"},
		{"malformed blocks", "x", `{"type":"section"}`, "invalid_blocks_format", "not a JSON array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkLimitsCase(t, tc) })
	}
}

// limitsCase is a message posted, and the error and violation it must get.
type limitsCase struct {
	name, text, blocks string
	wantErr, wantIn    string
}

func checkLimitsCase(t *testing.T, tc limitsCase) {
	s := newServer(t, fakeslack.Options{})
	form := url.Values{"channel": {"C1"}}
	if tc.text != "" {
		form.Set("text", tc.text)
	}
	if tc.blocks != "" {
		form.Set("blocks", tc.blocks)
	}
	gotErr, _ := postForm(t, s, "chat.postMessage", form)
	if gotErr != tc.wantErr {
		t.Errorf("error = %q, want %q", gotErr, tc.wantErr)
	}
	v := s.Violations()
	if tc.wantErr == "" {
		if len(v) != 0 || len(s.Messages("C1")) != 1 {
			t.Errorf("violations %q, %d messages", v, len(s.Messages("C1")))
		}
		return
	}
	if len(v) == 0 || !strings.Contains(strings.Join(v, "\n"), tc.wantIn) || !strings.HasPrefix(v[0], "chat.postMessage C1: ") {
		t.Errorf("violations %q, want one containing %q", v, tc.wantIn)
	}
	if n := len(s.Messages("C1")); n != 0 {
		t.Errorf("%d messages stored despite the violation", n)
	}
}

// Every path a message can take is checked: chat.update, chat.postEphemeral and slack-go's own encoding.
func TestLimitsOnEveryPath(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	_, ts := postForm(t, s, "chat.postMessage", url.Values{"channel": {"C1"}, "text": {"ok"}})
	if e, _ := postForm(t, s, "chat.update", url.Values{"channel": {"C1"}, "ts": {ts}, "blocks": {blocks(section(strings.Repeat("x", 3001)))}}); e != "invalid_blocks" {
		t.Errorf("chat.update: %q", e)
	}
	if m, _ := s.Message("C1", ts); m.Text != "ok" || m.Updates != 0 {
		t.Errorf("message changed by a rejected update: %+v", m)
	}
	if e, _ := postForm(t, s, "chat.postEphemeral", url.Values{"channel": {"C1"}, "user": {"U1"}, "text": {strings.Repeat("x", 40001)}}); e != "msg_too_long" {
		t.Errorf("chat.postEphemeral: %q", e)
	}
	api := newAPI(s, "xoxb-test")
	header := slack.NewHeaderBlock(slack.NewTextBlockObject("plain_text", strings.Repeat("h", 151), false, false))
	_, _, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionBlocks(header))
	if err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("slack-go header: %v", err)
	}
	v := s.Violations()
	if len(v) != 3 || !strings.HasPrefix(v[0], "chat.update C1 "+ts) || !strings.HasPrefix(v[1], "chat.postEphemeral") {
		t.Errorf("violations = %q", v)
	}
}
