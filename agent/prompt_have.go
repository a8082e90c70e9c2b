package agent

import (
	"os"
	"path/filepath"
	"strings"
)

// channelInstructionsHeading marks the channel's instructions in the
// system prompt, after AGENTS.md.
const channelInstructionsHeading = "Instructions for this Slack channel (set by its team with /h9 instructions; follow them like AGENTS.md):"

// haveLines tells the model what it has besides its tools' definitions:
// the files users share, share_file, and the repository and its
// checkpoints (before, it found out with git status).
func haveLines(p promptInfo) string {
	var b strings.Builder
	b.WriteString("Files the user shares in the thread (screenshots, logs) are saved under " + AttachmentsDir +
		"/ in the workspace; the user's message names their paths. They are never committed.\n")
	b.WriteString("share_file uploads a workspace file (a report, a rendered page, a log; at most 20 MiB) into the thread for the user.\n")
	if p.Repository {
		b.WriteString("The workspace is a git checkout of the team's repository on the session's own h9/… branch. " +
			"h9 commits your changes as a checkpoint each time a todo is completed (you need not commit); " +
			"when the session is done the user gets the diff and can push the branch or open a pull request.\n")
	}
	return b.String()
}

// isCheckout reports whether the workspace is a git checkout.
func isCheckout(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}
