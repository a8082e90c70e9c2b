package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// planModePrefix is put before the user's prompt in plan mode (the Planning module's
// prefix). It says what to do, not what is permitted: permissions are
// enforced by the tool filter.
const planModePrefix = "Analyse the request below and use todo_write to produce an implementation plan that can be executed directly, then summarise the plan briefly in plain text and stop.\n" +
	"Requirements for the todo items: each one is a concrete implementation action (for example: create a given file, implement a given function, run a given command),\n" +
	"not a high-level planning description (items such as \"clarify requirements\" or \"design the solution\", which cannot be executed directly, are forbidden).\n" +
	"To learn about the current codebase you may use read_file or bash (read-only commands: ls, cat, find, grep).\n" +
	"Do not create files, run build/install, or make any actual change.\n\n"

// ExecPrompt starts executing an approved plan (the Planning module's execPrompt).
const ExecPrompt = "Execute the todo list item by item. Rules:\n" +
	"1. Before starting an item, use todo_write to set its status to in_progress\n" +
	"2. Use tools to do the item's actual work (create files, write code, run commands, etc.); " +
	"only updating the status with todo_write without calling any other tool does not count as completing the item\n" +
	"3. After confirming the actual result, use todo_write to set its status to completed\n" +
	"4. Do not output progress summaries; move on to the next item immediately\n" +
	"When everything is done, report the overall result in one sentence."

// ContinuePrompt resumes execution when todos remain (the Planning module's
// execContinuePrompt): shorter, without repeating the full rules.
const ContinuePrompt = "Continue with the next pending or in_progress item in the todo list. " +
	"First mark it in_progress with todo_write, then use tools to do the actual work (write files, run commands, etc.), " +
	"mark it completed after confirming the result, then move on to the next item. " +
	"Do not only update statuses without doing real work, and do not output progress summaries."

// planPrompt applies the plan-mode prefix when the run is in plan mode.
func planPrompt(mode planning.PlanMode, prompt string) string {
	if mode == planning.PlanModePlan {
		return planModePrefix + prompt
	}
	return prompt
}

// promptInfo is what the system prompt describes.
type promptInfo struct {
	WorkspaceDir string
	Mode         planning.PlanMode
	Sandbox      workspace.Level
	Skills       []skill
	AgentsMD     string // content of AGENTS.md at the workspace root, "" if none
	// Channel is the Slack channel's instructions, "" if none.
	Channel string
	// Repository: the workspace is a checkout of a configured repository.
	Repository bool
}

// systemPrompt tells the model what h9 is and where it works.
func systemPrompt(p promptInfo) string {
	var b strings.Builder
	b.WriteString("You are h9, a coding agent that works for a team through a Slack thread. " +
		"Each thread is one session with its own workspace directory; you act only through your tools, " +
		"and the user sees your tool calls, your todo list and your final answer in the thread.\n\n")
	fmt.Fprintf(&b, "Workspace: %s (all paths are relative to it; paths outside it are refused).\n", p.WorkspaceDir)
	fmt.Fprintf(&b, "Mode: %s. %s\n", p.Mode, modeLine(p.Mode))
	fmt.Fprintf(&b, "Sandbox: %s. %s\n", p.Sandbox, sandboxLine(p.Sandbox))
	b.WriteString("Use todo_write to track multi-step work. Keep answers short; do not print secrets or environment values.\n")
	b.WriteString(haveLines(p))
	if len(p.Skills) > 0 {
		b.WriteString("\nSkills (call use_skill with the name to get the instructions before doing such a task):\n")
		for _, s := range p.Skills {
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		}
	}
	if p.AgentsMD != "" {
		b.WriteString("\nRepository instructions from AGENTS.md at the workspace root:\n")
		b.WriteString(p.AgentsMD)
		b.WriteString("\n")
	}
	if p.Channel != "" {
		b.WriteString("\n" + channelInstructionsHeading + "\n")
		b.WriteString(p.Channel)
		b.WriteString("\n")
	}
	return b.String()
}

func modeLine(m planning.PlanMode) string {
	switch m {
	case planning.PlanModePlan:
		return "Planning only: explore and write a todo plan; nothing in the workspace may change."
	case planning.PlanModeAutoEdit:
		return "Every file change and command is shown to the user for approval before it runs; a rejected call did not happen."
	}
	return "Full tool access."
}

func sandboxLine(l workspace.Level) string {
	if l == workspace.LevelBwrap {
		return "bash runs in a bubblewrap sandbox: no network, read-only system, writable workspace, private /tmp."
	}
	if l == workspace.LevelLandlock {
		return "bash runs confined by Landlock: it may write only the workspace, its home and /tmp; no TCP network."
	}
	return "bash runs without a sandbox, directly on the host, inside the workspace directory; be careful."
}

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
