package render

import (
	"strings"

	"github.com/slack-go/slack"
)

// postKeySep joins a block id and the key of the post it starts.
const postKeySep = "#"

// maxTextSections bounds the sections a text-only message becomes:
// Slack's 40,000 characters of text fit.
const maxTextSections = 13

// WithKey returns m with key in the block id of its first block, so the
// post can be found in its thread (PostKey) by whoever does not know
// whether it was posted. A message without blocks gets its text as
// sections, which Slack shows as it shows the text.
func WithKey(m Message, key string) Message {
	bs := m.Blocks
	if len(bs) == 0 {
		bs = textSections("h9_text", m.Text, maxTextSections)
	}
	if len(bs) == 0 {
		return m
	}
	keyed := append([]slack.Block{withBlockID(bs[0], key)}, bs[1:]...)
	return Message{Text: m.Text, Blocks: keyed}
}

// withBlockID is a copy of b with key after its block id.
func withBlockID(b slack.Block, key string) slack.Block {
	switch v := b.(type) {
	case *slack.SectionBlock:
		c := *v
		c.BlockID += postKeySep + key
		return &c
	case *slack.ActionBlock:
		c := *v
		c.BlockID += postKeySep + key
		return &c
	case *slack.ContextBlock:
		c := *v
		c.BlockID += postKeySep + key
		return &c
	case *slack.HeaderBlock:
		c := *v
		c.BlockID += postKeySep + key
		return &c
	}
	return b
}

// PostKey is the key WithKey put in a block id, "" when it has none.
func PostKey(blockID string) string {
	_, key, _ := strings.Cut(blockID, postKeySep)
	return key
}
