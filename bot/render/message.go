package render

import "github.com/slack-go/slack"

// Message is one Slack message: Text is the notification fallback (always
// set, escaped mrkdwn) and Blocks what Slack shows.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// mrkdwn is a mrkdwn text object; callers pass text that is already safe.
func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

// section is one mrkdwn section; s must be safe and within MaxSectionText.
func section(blockID, s string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(s), nil, nil, slack.SectionBlockOptionBlockID(blockID))
}

// contextLine is a one-line grey note; s must be safe.
func contextLine(blockID, s string) *slack.ContextBlock {
	return slack.NewContextBlock(blockID, mrkdwn(s))
}

// button builds a button carrying v. style may be "" (default).
func button(actionID, label string, v ButtonValue, style slack.Style) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actionID, v.Encode(),
		slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
	if style != "" {
		b = b.WithStyle(style)
	}
	return b
}

// actions is an actions block; blockID is always set so clicks route.
func actions(blockID string, buttons ...*slack.ButtonBlockElement) *slack.ActionBlock {
	els := make([]slack.BlockElement, len(buttons))
	for i, b := range buttons {
		els[i] = b
	}
	return slack.NewActionBlock(blockID, els...)
}

// blocks converts concrete blocks to the interface slice.
func blocks(bs ...slack.Block) []slack.Block { return bs }
