package fakeslack

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Slack's documented limits (ARCHITECTURE.md "Slack limits" and the Block Kit reference).
const (
	maxBlocks           = 50
	maxSectionText      = 3000
	maxSectionFieldText = 2000
	maxSectionFields    = 10
	maxHeaderText       = 150
	maxButtonText       = 75
	maxID               = 255 // action_id and block_id
	maxButtonValue      = 2000
	maxButtonURL        = 3000
	maxMessageText      = 40000
	maxContextElements  = 10
	maxActionsElements  = 25
	maxMarkdownText     = 12000
	maxContextText      = 3000
)

// Slack's answers to a message it will not accept.
const (
	errInvalidBlocks       = "invalid_blocks"
	errInvalidBlocksFormat = "invalid_blocks_format"
	errMsgTooLong          = "msg_too_long"
	errNoText              = "no_text"
)

var knownBlockTypes = map[string]bool{
	"section": true, "header": true, "actions": true, "context": true, "divider": true, "image": true,
	"rich_text": true, "markdown": true, "input": true, "file": true, "video": true, "call": true,
	"plan": true, "task_card": true, "table": true, "context_actions": true,
}

// content is a message payload as the app sent it.
type content struct {
	text           string
	hasText        bool
	blocks         json.RawMessage // nil, "null" or "[]" mean none
	hasAttachments bool
}

// check returns Slack's error code and a description of each problem ("" and nil when valid).
func (c content) check() (slackErr string, problems []string) {
	var ck checker
	blocks, ok := ck.parseBlocks(c.blocks)
	if !ok {
		return errInvalidBlocksFormat, ck.problems
	}
	ck.blocks(blocks)
	if len(ck.problems) > 0 {
		slackErr = errInvalidBlocks
	}
	if n := utf8.RuneCountInString(c.text); n > maxMessageText {
		ck.addf("/text", "message text is %d characters (max %d)", n, maxMessageText)
		if slackErr == "" {
			slackErr = errMsgTooLong
		}
	}
	if c.text == "" && len(blocks) == 0 && !c.hasAttachments {
		ck.addf("", "message has neither text nor blocks")
		slackErr = errNoText
	}
	return slackErr, ck.problems
}

type checker struct {
	problems  []string
	maxBlocks int // 0: a message's maxBlocks
}

func (ck *checker) addf(ptr, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if ptr != "" {
		msg += " [json-pointer:" + ptr + "]"
	}
	ck.problems = append(ck.problems, msg)
}

func (ck *checker) parseBlocks(raw json.RawMessage) ([]map[string]any, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		ck.addf("/blocks", "blocks are not a JSON array of objects: %v", err)
		return nil, false
	}
	return blocks, true
}

func (ck *checker) blocks(blocks []map[string]any) {
	limit := maxBlocks
	if ck.maxBlocks > 0 {
		limit = ck.maxBlocks
	}
	if len(blocks) > limit {
		ck.addf("/blocks", "message has %d blocks (max %d)", len(blocks), limit)
	}
	seen := map[string]bool{}
	for i, b := range blocks {
		ptr := fmt.Sprintf("/blocks/%d", i)
		ck.blockID(ptr, b, seen)
		typ, _ := b["type"].(string)
		switch typ {
		case "section":
			ck.section(ptr, b)
		case "header":
			ck.header(ptr, b)
		case "actions":
			ck.actions(ptr, b)
		case "context":
			ck.context(ptr, b)
		case "markdown":
			ck.textLen(ptr+"/text", b["text"], maxMarkdownText, "markdown block text")
		default:
			if !knownBlockTypes[typ] {
				ck.addf(ptr+"/type", "unknown block type %q", typ)
			}
		}
	}
}

func (ck *checker) blockID(ptr string, b map[string]any, seen map[string]bool) {
	v, present := b["block_id"]
	if !present {
		return
	}
	id, ok := v.(string)
	switch {
	case !ok:
		ck.addf(ptr+"/block_id", "block_id must be a string")
	case id == "":
		ck.addf(ptr+"/block_id", "block_id must not be empty")
	case utf8.RuneCountInString(id) > maxID:
		ck.addf(ptr+"/block_id", "block_id is %d characters (max %d)", utf8.RuneCountInString(id), maxID)
	case seen[id]:
		ck.addf(ptr+"/block_id", "block_id %q is not unique within the message", id)
	default:
		seen[id] = true
	}
}

func (ck *checker) section(ptr string, b map[string]any) {
	text, hasText := b["text"]
	fields, hasFields := b["fields"].([]any)
	if !hasText && !hasFields {
		ck.addf(ptr, "section needs text or fields")
	}
	if hasText {
		ck.textObject(ptr+"/text", text, maxSectionText, "section text")
	}
	if len(fields) > maxSectionFields {
		ck.addf(ptr+"/fields", "section has %d fields (max %d)", len(fields), maxSectionFields)
	}
	for i, f := range fields {
		ck.textObject(fmt.Sprintf("%s/fields/%d", ptr, i), f, maxSectionFieldText, "section field")
	}
	if acc, ok := b["accessory"]; ok {
		ck.element(ptr+"/accessory", acc, nil)
	}
}

func (ck *checker) header(ptr string, b map[string]any) {
	t, _ := b["text"].(map[string]any)
	if t == nil || t["type"] != "plain_text" {
		ck.addf(ptr+"/text", "header text must be a plain_text object")
		return
	}
	ck.textObject(ptr+"/text", t, maxHeaderText, "header text")
}

func (ck *checker) actions(ptr string, b map[string]any) {
	els, _ := b["elements"].([]any)
	if len(els) == 0 || len(els) > maxActionsElements {
		ck.addf(ptr+"/elements", "actions block has %d elements (need 1..%d)", len(els), maxActionsElements)
	}
	ids := map[string]bool{}
	for i, e := range els {
		ck.element(fmt.Sprintf("%s/elements/%d", ptr, i), e, ids)
	}
}

func (ck *checker) context(ptr string, b map[string]any) {
	els, _ := b["elements"].([]any)
	if len(els) == 0 || len(els) > maxContextElements {
		ck.addf(ptr+"/elements", "context block has %d elements (need 1..%d)", len(els), maxContextElements)
	}
	for i, e := range els {
		m, _ := e.(map[string]any)
		if m != nil && m["type"] == "image" {
			continue
		}
		ck.textObject(fmt.Sprintf("%s/elements/%d", ptr, i), e, maxContextText, "context text")
	}
}

// element checks an interactive element; ids collects action_ids that must be unique in a block.
func (ck *checker) element(ptr string, v any, ids map[string]bool) {
	e, _ := v.(map[string]any)
	if e == nil {
		ck.addf(ptr, "element must be an object")
		return
	}
	if id, ok := e["action_id"].(string); ok {
		if n := utf8.RuneCountInString(id); n > maxID {
			ck.addf(ptr+"/action_id", "action_id is %d characters (max %d)", n, maxID)
		}
		if ids != nil && ids[id] {
			ck.addf(ptr+"/action_id", "action_id %q is not unique within the block", id)
		}
		if ids != nil {
			ids[id] = true
		}
	}
	if e["type"] != "button" {
		return
	}
	t, _ := e["text"].(map[string]any)
	if t == nil || t["type"] != "plain_text" {
		ck.addf(ptr+"/text", "button text must be a plain_text object")
	} else {
		ck.textObject(ptr+"/text", t, maxButtonText, "button text")
	}
	ck.strLen(ptr+"/value", e["value"], maxButtonValue, "button value")
	ck.strLen(ptr+"/url", e["url"], maxButtonURL, "button url")
	if st, ok := e["style"].(string); ok && st != "primary" && st != "danger" {
		ck.addf(ptr+"/style", "button style %q is not primary or danger", st)
	}
}

// textObject checks a {type: plain_text|mrkdwn, text} object with non-empty text of at most max characters.
func (ck *checker) textObject(ptr string, v any, limit int, what string) {
	t, _ := v.(map[string]any)
	if t == nil {
		ck.addf(ptr, "%s must be a text object", what)
		return
	}
	if typ := t["type"]; typ != "plain_text" && typ != "mrkdwn" {
		ck.addf(ptr+"/type", "%s has type %v (want plain_text or mrkdwn)", what, typ)
	}
	s, _ := t["text"].(string)
	if s == "" {
		ck.addf(ptr+"/text", "%s must not be empty", what)
		return
	}
	ck.strLen(ptr+"/text", s, limit, what)
}

func (ck *checker) textLen(ptr string, v any, limit int, what string) {
	s, _ := v.(string)
	if s == "" {
		ck.addf(ptr, "%s must not be empty", what)
		return
	}
	ck.strLen(ptr, s, limit, what)
}

func (ck *checker) strLen(ptr string, v any, limit int, what string) {
	s, _ := v.(string)
	if n := utf8.RuneCountInString(s); n > limit {
		ck.addf(ptr, "%s is %d characters (max %d)", what, n, limit)
	}
}
