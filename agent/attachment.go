package agent

import (
	"fmt"
	"strings"
)

// Attachment is a file a user shared with a request (RunOptions.Files):
// the caller has put it into the session's workspace at Path before the run (the bot downloads
// Slack files into .h9/attachments/). The agent tells the model the path;
// an image is also shown to a model that sees images (vision.go).
type Attachment struct {
	Path string `json:"path"`           // relative to the workspace
	Name string `json:"name"`           // the name the user gave it
	Size int64  `json:"size,omitempty"` // bytes, as announced
	// Source is where the caller fetches it from (Slack's
	// url_private_download); the agent never uses it.
	Source string `json:"source,omitempty"`
}

// AttachmentsDir is the workspace folder of shared files; checkpoints and
// diffs leave it out.
const AttachmentsDir = ".h9/attachments"

// attachmentNote is the part of a prompt that names the request's files.
func attachmentNote(files []Attachment) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nFiles attached to this message (in the workspace; read them with read_file or bash):")
	for _, f := range files {
		fmt.Fprintf(&b, "\n- %s", f.Path)
		if f.Name != "" && !strings.HasSuffix(f.Path, f.Name) {
			fmt.Fprintf(&b, " (shared as %q)", f.Name)
		}
		if f.Size > 0 {
			fmt.Fprintf(&b, ", %s", humanBytes(f.Size))
		}
	}
	return b.String()
}

// humanBytes writes a size the way a person reads it.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
