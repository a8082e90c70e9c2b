package agent

import (
	"context"
	"encoding/json"
)

const writeFileName = "write_file"

type writeFileParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

const writeFileDescription = "Create or overwrite a file of the workspace with the given content. " +
	"Parent directories are created. Prefer edit_file for changing part of an existing file."

var writeFileSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path":    {"type": "string", "description": "File path relative to the workspace root."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"]
}`)

var writeFileTool = tool{
	Name:          writeFileName,
	Description:   writeFileDescription,
	Schema:        writeFileSchema,
	Mutating:      true,
	UsesWorkspace: true,
	Summary:       func(args string) string { return summaryOf(args, "path") },
	Run: func(_ context.Context, env *toolEnv, args string) toolResult {
		var p writeFileParams
		if err := parseArgs(args, &p, "path", "content"); err != nil {
			return fail(err)
		}
		out, err := env.ws.WriteFile(p.Path, p.Content)
		if err != nil {
			return fail(err)
		}
		return ok(out)
	},
	Preview: func(env *toolEnv, args string) (string, error) {
		var p writeFileParams
		if err := parseArgs(args, &p, "path", "content"); err != nil {
			return "", err
		}
		return env.ws.PreviewWrite(p.Path, p.Content)
	},
}
