package workspace

import (
	"errors"

	"github.com/h9-app/h9/workspace/readonly"
)

// Sentinel errors. Tool errors wrap them with the path or command involved, so
// callers can test with errors.Is while the model reads the full message.
var (
	// ErrReadOnly: plan mode refused a bash command that could change something.
	ErrReadOnly = readonly.ErrReadOnly
	// ErrOutsideWorkspace: a path (.., absolute, or through a symlink) leaves the workspace.
	ErrOutsideWorkspace = errors.New("path is outside the workspace")
	// ErrSandboxUnavailable: H9_SANDBOX=bwrap but bubblewrap cannot run here.
	ErrSandboxUnavailable = errors.New("sandbox unavailable")
	// ErrInvalidSandbox: H9_SANDBOX is not auto, bwrap or none.
	ErrInvalidSandbox = errors.New("invalid sandbox setting")
	// ErrInvalidSessionID: the session id is empty.
	ErrInvalidSessionID = errors.New("invalid session id")
	// ErrClosed: the workspace was closed.
	ErrClosed = errors.New("workspace closed")
	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("file not found")
	// ErrIsDirectory: a file tool was given a directory.
	ErrIsDirectory = errors.New("is a directory")
	// ErrNotRegular: a FIFO, socket or device, which file tools refuse
	// rather than block on.
	ErrNotRegular = errors.New("not a regular file")
	// ErrBinary: read or edit of a file that is not text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge: a file is too large to edit in memory.
	ErrTooLarge = errors.New("file too large")
	// ErrNoMatch: edit_file's old_string does not occur in the file.
	ErrNoMatch = errors.New("old_string not found")
	// ErrMultipleMatches: old_string occurs more than once and replace_all is false.
	ErrMultipleMatches = errors.New("old_string is not unique")
	// ErrSharedFile: a write in place to a file with more than one link.
	ErrSharedFile = errors.New("shared file")
	// ErrInvalidArgument: an argument is empty, negative or otherwise unusable.
	ErrInvalidArgument = errors.New("invalid argument")
)
