package agent

import (
	"context"
	"encoding/json"
)

const readFileName = "read_file"

type readFileParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

const readFileDescription = "Read a text file of the workspace. Lines are numbered. " +
	"Use offset (1-based line) and limit (number of lines) to page through large files."

var readFileSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path":   {"type": "string",  "description": "File path relative to the workspace root."},
    "offset": {"type": "integer", "description": "First line to read, 1-based. Omit to start at the beginning."},
    "limit":  {"type": "integer", "description": "Maximum number of lines to read. Omit for the default."}
  },
  "required": ["path"]
}`)

var readFileTool = tool{
	Name:          readFileName,
	Description:   readFileDescription,
	Schema:        readFileSchema,
	UsesWorkspace: true,
	Summary:       func(args string) string { return summaryOf(args, "path") },
	Run: func(_ context.Context, env *toolEnv, args string) toolResult {
		var p readFileParams
		if err := parseArgs(args, &p, "path"); err != nil {
			return fail(err)
		}
		out, err := env.ws.ReadFile(p.Path, p.Offset, p.Limit)
		if err != nil {
			return fail(err)
		}
		return ok(out)
	},
}
