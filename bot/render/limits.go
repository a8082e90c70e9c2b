package render

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/slack-go/slack"
)

// Slack's limits (ARCHITECTURE.md "Slack limits"), in Len units.
const (
	MaxBlocks        = 50
	MaxSectionText   = 3000
	MaxHeaderText    = 150
	MaxButtonText    = 75
	MaxID            = 255 // action_id and block_id
	MaxButtonValue   = 2000
	MaxMessageText   = 40000
	MaxFieldText     = 2000 // one section field
	MaxFields        = 10   // fields per section
	MaxContextItems  = 10   // elements per context block
	MaxActionButtons = 25   // elements per actions block
)

// CheckLimits reports every way m would break Slack's limits: block count,
// text lengths, empty section texts, button labels, ids (length, presence on
// interactive blocks, uniqueness) and button values. It returns nil for a
// sendable message and otherwise the violations joined; match them with
// errors.Is against this package's Err values.
func CheckLimits(m Message) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	switch n := Len(m.Text); {
	case n == 0:
		add(fmt.Errorf("message text: %w", ErrEmptyText))
	case n > MaxMessageText:
		add(fmt.Errorf("message text: %w: %d > %d", ErrTextTooLong, n, MaxMessageText))
	}
	if len(m.Blocks) > MaxBlocks {
		add(fmt.Errorf("%w: %d > %d", ErrTooManyBlocks, len(m.Blocks), MaxBlocks))
	}
	seen := make(map[string]int)
	for i, b := range m.Blocks {
		c := blockChecker{where: fmt.Sprintf("block %d", i)}
		c.block(b)
		if id := blockID(b); id != "" {
			if first, dup := seen[id]; dup {
				c.fail(fmt.Errorf("%w: block_id %q also on block %d", ErrDuplicateID, id, first))
			}
			seen[id] = i
		}
		errs = append(errs, c.errs...)
	}
	return errors.Join(errs...)
}

func blockID(b slack.Block) string {
	if isNil(b) {
		return ""
	}
	return b.ID()
}

// isNil catches typed nil pointers too, whose ID method would panic.
func isNil(b slack.Block) bool {
	if b == nil {
		return true
	}
	v := reflect.ValueOf(b)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Errors returned by CheckLimits (joined, so match each with errors.Is) and
// by DecodeButtonValue.
var (
	// ErrTooManyBlocks: more than MaxBlocks blocks.
	ErrTooManyBlocks = errors.New("too many blocks")
	// ErrTextTooLong: a text (message, section, context, header, field) is over its limit.
	ErrTextTooLong = errors.New("text too long")
	// ErrEmptyText: a required text is empty (Slack rejects empty section text).
	ErrEmptyText = errors.New("empty text")
	// ErrButtonTextTooLong: a button label is over MaxButtonText.
	ErrButtonTextTooLong = errors.New("button text too long")
	// ErrIDTooLong: an action_id or block_id is over MaxID.
	ErrIDTooLong = errors.New("id too long")
	// ErrMissingID: an interactive block or element has no id, so a click could not be routed.
	ErrMissingID = errors.New("missing id")
	// ErrDuplicateID: two blocks share a block_id, or two buttons in one block an action_id.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrValueTooLong: a button value is over MaxButtonValue.
	ErrValueTooLong = errors.New("button value too long")
	// ErrTooManyElements: a block holds more elements or fields than Slack allows.
	ErrTooManyElements = errors.New("too many elements")
	// ErrBadButtonValue: a button value that h9 did not produce (or that was tampered with).
	ErrBadButtonValue = errors.New("bad button value")
)
