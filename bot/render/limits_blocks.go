package render

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// blockChecker collects the violations of one block.
type blockChecker struct {
	where string
	errs  []error
}

func (c *blockChecker) fail(err error) { c.errs = append(c.errs, fmt.Errorf("%s: %w", c.where, err)) }

// block dispatches on the block type; slack-go uses pointers when it builds
// or decodes blocks, values are accepted too.
func (c *blockChecker) block(b slack.Block) {
	if isNil(b) {
		c.fail(fmt.Errorf("%w: nil block", ErrEmptyText))
		return
	}
	switch b := b.(type) {
	case *slack.SectionBlock:
		c.section(b)
	case slack.SectionBlock:
		c.section(&b)
	case *slack.HeaderBlock:
		c.header(b)
	case slack.HeaderBlock:
		c.header(&b)
	case *slack.ContextBlock:
		c.context(b)
	case slack.ContextBlock:
		c.context(&b)
	case *slack.ActionBlock:
		c.actions(b)
	case slack.ActionBlock:
		c.actions(&b)
	}
	c.id("block_id", blockID(b))
}

func (c *blockChecker) id(what, id string) {
	if n := Len(id); n > MaxID {
		c.fail(fmt.Errorf("%s: %w: %d > %d", what, ErrIDTooLong, n, MaxID))
	}
}

func (c *blockChecker) text(what string, t *slack.TextBlockObject, max int, required bool) {
	if t == nil || strings.TrimSpace(t.Text) == "" {
		if required {
			c.fail(fmt.Errorf("%s: %w", what, ErrEmptyText))
		}
		return
	}
	if n := Len(t.Text); n > max {
		c.fail(fmt.Errorf("%s: %w: %d > %d", what, ErrTextTooLong, n, max))
	}
}

func (c *blockChecker) section(b *slack.SectionBlock) {
	c.text("section text", b.Text, MaxSectionText, len(b.Fields) == 0)
	if len(b.Fields) > MaxFields {
		c.fail(fmt.Errorf("section fields: %w: %d > %d", ErrTooManyElements, len(b.Fields), MaxFields))
	}
	for _, f := range b.Fields {
		c.text("section field", f, MaxFieldText, true)
	}
	if b.Accessory != nil && b.Accessory.ButtonElement != nil {
		c.button(b.Accessory.ButtonElement)
		if b.BlockID == "" {
			c.fail(fmt.Errorf("section with a button: %w: block_id", ErrMissingID))
		}
	}
}

func (c *blockChecker) header(b *slack.HeaderBlock) {
	c.text("header", b.Text, MaxHeaderText, true)
}

func (c *blockChecker) context(b *slack.ContextBlock) {
	els := b.ContextElements.Elements
	if len(els) == 0 || len(els) > MaxContextItems {
		c.fail(fmt.Errorf("context: %w: %d elements, 1..%d allowed", ErrTooManyElements, len(els), MaxContextItems))
	}
	for _, e := range els {
		if t, ok := e.(*slack.TextBlockObject); ok {
			c.text("context text", t, MaxSectionText, true)
		}
	}
}

func (c *blockChecker) actions(b *slack.ActionBlock) {
	if b.BlockID == "" {
		c.fail(fmt.Errorf("actions: %w: block_id", ErrMissingID))
	}
	var els []slack.BlockElement
	if b.Elements != nil {
		els = b.Elements.ElementSet
	}
	if len(els) == 0 || len(els) > MaxActionButtons {
		c.fail(fmt.Errorf("actions: %w: %d elements, 1..%d allowed", ErrTooManyElements, len(els), MaxActionButtons))
	}
	seen := make(map[string]bool)
	for _, e := range els {
		btn, ok := e.(*slack.ButtonBlockElement)
		if !ok {
			continue
		}
		c.button(btn)
		if seen[btn.ActionID] {
			c.fail(fmt.Errorf("%w: action_id %q twice in one block", ErrDuplicateID, btn.ActionID))
		}
		seen[btn.ActionID] = true
	}
}

func (c *blockChecker) button(b *slack.ButtonBlockElement) {
	if b.Text == nil || b.Text.Text == "" {
		c.fail(fmt.Errorf("button: %w", ErrEmptyText))
	} else if n := Len(b.Text.Text); n > MaxButtonText {
		c.fail(fmt.Errorf("button %q: %w: %d > %d", b.ActionID, ErrButtonTextTooLong, n, MaxButtonText))
	}
	if b.ActionID == "" {
		c.fail(fmt.Errorf("button: %w: action_id", ErrMissingID))
	}
	c.id("action_id", b.ActionID)
	if n := Len(b.Value); n > MaxButtonValue {
		c.fail(fmt.Errorf("button %q: %w: %d > %d", b.ActionID, ErrValueTooLong, n, MaxButtonValue))
	}
}
