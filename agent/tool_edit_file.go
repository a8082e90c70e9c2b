package agent

import (
	"context"
	"encoding/json"
)

const editFileName = "edit_file"

type editFileParams struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

const editFileDescription = "Replace text in a file of the workspace. old_string must match the file exactly " +
	"(including indentation) and, unless replace_all is true, occur exactly once; include enough surrounding lines to make it unique."

var editFileSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path":        {"type": "string",  "description": "File path relative to the workspace root."},
    "old_string":  {"type": "string",  "description": "The exact text to replace."},
    "new_string":  {"type": "string",  "description": "The replacement text."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."}
  },
  "required": ["path", "old_string", "new_string"]
}`)

var editFileTool = tool{
	Name:          editFileName,
	Description:   editFileDescription,
	Schema:        editFileSchema,
	Mutating:      true,
	UsesWorkspace: true,
	Summary:       func(args string) string { return summaryOf(args, "path") },
	Run: func(_ context.Context, env *toolEnv, args string) toolResult {
		var p editFileParams
		if err := parseArgs(args, &p, "path", "old_string", "new_string"); err != nil {
			return fail(err)
		}
		out, err := env.ws.EditFile(p.Path, p.OldString, p.NewString, p.ReplaceAll)
		if err != nil {
			return fail(err)
		}
		return ok(out)
	},
	Preview: func(env *toolEnv, args string) (string, error) {
		var p editFileParams
		if err := parseArgs(args, &p, "path", "old_string", "new_string"); err != nil {
			return "", err
		}
		return env.ws.PreviewEdit(p.Path, p.OldString, p.NewString, p.ReplaceAll)
	},
}
