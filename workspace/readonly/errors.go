package readonly

import "errors"

// ErrReadOnly: the command could change something, or the checker cannot
// prove that it does not. workspace.ErrReadOnly is this same value.
var ErrReadOnly = errors.New("plan mode is read-only")
