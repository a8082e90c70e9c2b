package agent

import (
	"context"
	"encoding/json"
	"strings"
)

const useSkillName = "use_skill"

type useSkillParams struct {
	Name string `json:"name"`
}

const useSkillDescription = "Load the instructions of a skill listed in the system prompt. " +
	"Call it before starting a task the skill covers, then follow the instructions."

var useSkillSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "The skill's name as listed in the system prompt."}
  },
  "required": ["name"]
}`)

var useSkillTool = tool{
	Name:        useSkillName,
	Description: useSkillDescription,
	Schema:      useSkillSchema,
	Summary:     func(args string) string { return summaryOf(args, "name") },
	Run: func(_ context.Context, env *toolEnv, args string) toolResult {
		var p useSkillParams
		if err := parseArgs(args, &p, "name"); err != nil {
			return fail(err)
		}
		names := make([]string, 0, len(env.skills))
		for _, s := range env.skills {
			if s.Name == p.Name {
				return ok(s.Body)
			}
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return failf("no skill named %q: no skills are installed", p.Name)
		}
		return failf("no skill named %q; available skills: %s", p.Name, strings.Join(names, ", "))
	},
}
