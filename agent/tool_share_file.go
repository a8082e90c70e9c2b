package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
)

const shareFileName = "share_file"

// shareFileMax is the largest file share_file uploads.
const shareFileMax = 20 << 20

// FileSharer puts a file into the session's Slack thread (the bot's
// external upload: files.getUploadURLExternal, the bytes,
// files.completeUploadExternal with the thread's ts). r yields size bytes;
// name is the file's base name, title its title.
type FileSharer func(ctx context.Context, name, title string, r io.Reader, size int64) error

type shareFileParams struct {
	Path  string `json:"path"`
	Title string `json:"title"`
}

const shareFileDescription = "Upload a workspace file (at most 20 MiB: a screenshot, a report, a log) into the Slack thread, " +
	"for the user to see. It is shared under its base name; title is optional (default: the name). It changes nothing."

var shareFileSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path":  {"type": "string", "description": "File path relative to the workspace root."},
    "title": {"type": "string", "description": "Title shown in Slack. Omit to use the file's name."}
  },
  "required": ["path"]
}`)

// shareFileTool only reads the workspace, so plan mode has it too.
var shareFileTool = tool{
	Name:          shareFileName,
	Description:   shareFileDescription,
	Schema:        shareFileSchema,
	UsesWorkspace: true,
	Summary:       func(args string) string { return summaryOf(args, "path") },
	Run:           runShareFile,
}

func runShareFile(ctx context.Context, env *toolEnv, args string) toolResult {
	var p shareFileParams
	if err := parseArgs(args, &p, "path"); err != nil {
		return fail(err)
	}
	if env.share == nil {
		return failf("files cannot be shared from this session; say where the file is instead")
	}
	f, err := env.ws.OpenFile(p.Path) // confined; a FIFO, socket or device is refused
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if fi.Size() > shareFileMax {
		return failf("%q is %s; share_file uploads at most %s (compress it or share a part)", p.Path, humanBytes(fi.Size()), humanBytes(shareFileMax))
	}
	name := path.Base(strings.ReplaceAll(p.Path, `\`, "/"))
	title := strings.TrimSpace(p.Title)
	if title == "" {
		title = name
	}
	if err := env.share(ctx, name, title, io.LimitReader(f, fi.Size()), fi.Size()); err != nil {
		return failf("sharing %q in the thread failed: %v", p.Path, err)
	}
	return ok(fmt.Sprintf("shared %s (%s) in the thread as %q", name, humanBytes(fi.Size()), title))
}
