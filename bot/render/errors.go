package render

import "errors"

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
