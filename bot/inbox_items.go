package bot

import (
	"encoding/json"
	"fmt"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// input is a message that came from Slack: a replica that received it for
// a session another replica holds forwards it there (fleet.go), encoded.
type input interface {
	message
	item() inboxItem
}

// starter is a message that needs the thread's lease even when the thread
// has no session: it may start one, or it takes what the thread's inbox
// holds. Other messages to a thread without a session need no lease.
type starter interface {
	message
	starts()
}

func (msgCreate) starts()  {}
func (msgMention) starts() {}
func (msgDrain) starts()   {}

// inboxItem is an input as the durable inbox carries it between replicas.
type inboxItem struct {
	Kind    string            `json:"kind"`
	Team    string            `json:"team,omitempty"`
	User    string            `json:"user,omitempty"`
	Text    string            `json:"text,omitempty"`
	TS      string            `json:"ts,omitempty"`
	Mode    planning.PlanMode `json:"mode,omitempty"`
	Channel string            `json:"channel,omitempty"`
	Action  string            `json:"action,omitempty"`
	Value   string            `json:"value,omitempty"` // render.ButtonValue, encoded
	Files   []sharedFile      `json:"files,omitempty"`
}

const (
	itemCreate  = "create"
	itemMention = "mention"
	itemReply   = "reply"
	itemStatus  = "status"
	itemAction  = "action"
)

func (m msgCreate) item() inboxItem {
	return inboxItem{Kind: itemCreate, Team: m.team, User: m.owner, Text: m.task, Mode: m.mode}
}
func (m msgMention) item() inboxItem {
	return inboxItem{Kind: itemMention, Team: m.team, User: m.user, Text: m.text, TS: m.ts, Files: m.files}
}
func (m msgReply) item() inboxItem {
	return inboxItem{Kind: itemReply, User: m.user, Text: m.text, TS: m.ts, Files: m.files}
}
func (m msgStatus) item() inboxItem { return inboxItem{Kind: itemStatus, User: m.user} }
func (m msgAction) item() inboxItem {
	return inboxItem{Kind: itemAction, User: m.user, Channel: m.channel, Action: m.action, Value: m.value.Encode()}
}

// message decodes an item back into the input it was.
func (it inboxItem) message() (message, error) {
	switch it.Kind {
	case itemCreate:
		return msgCreate{team: it.Team, owner: it.User, task: it.Text, mode: it.Mode}, nil
	case itemMention:
		return msgMention{team: it.Team, user: it.User, text: it.Text, ts: it.TS, files: it.Files}, nil
	case itemReply:
		return msgReply{user: it.User, text: it.Text, ts: it.TS, files: it.Files}, nil
	case itemStatus:
		return msgStatus{user: it.User}, nil
	case itemAction:
		v, err := render.DecodeButtonValue(it.Value)
		if err != nil {
			return nil, err
		}
		return msgAction{user: it.User, channel: it.Channel, action: it.Action, value: v}, nil
	}
	return nil, fmt.Errorf("unknown inbox item kind %q", it.Kind)
}

func encodeItem(in input) ([]byte, error) { return json.Marshal(in.item()) }

func decodeItem(data []byte) (message, error) {
	var it inboxItem
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, err
	}
	return it.message()
}
