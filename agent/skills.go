package agent

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v2"

	"github.com/h9-app/h9/workspace"
)

// A skill is a folder holding SKILL.md: YAML front matter with name and
// description, then instructions. The system prompt lists name and
// description; use_skill returns the instructions.
type skill struct {
	Name        string
	Description string
	Body        string
}

const (
	skillFile          = "SKILL.md"
	workspaceSkillsDir = ".h9/skills"
	maxSkillBytes      = 256 << 10
	maxSkills          = 100
)

type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// loadSkills reads the skills of the global directory (may be "") and of the
// workspace. Both are read through os.Root so a symlink in the workspace
// cannot expose a host file, and only regular files are read, so a FIFO
// cannot block the run; a workspace skill overrides a global one of the
// same name. Unreadable or malformed skills are skipped: a broken skill
// must not stop a run.
func loadSkills(globalDir, workspaceDir string) []skill {
	byName := map[string]skill{}
	for _, dir := range []struct{ root, sub string }{{globalDir, "."}, {workspaceDir, workspaceSkillsDir}} {
		if dir.root == "" {
			continue
		}
		root, err := os.OpenRoot(dir.root)
		if err != nil {
			continue
		}
		for _, s := range readSkillDir(root, dir.sub) {
			byName[s.Name] = s
		}
		root.Close()
	}
	out := make([]skill, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// readSkillDir parses <dir>/*/SKILL.md under root.
func readSkillDir(root *os.Root, dir string) []skill {
	entries, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return nil
	}
	var out []skill
	for _, e := range entries {
		if !e.IsDir() || len(out) >= maxSkills {
			continue
		}
		data, err := workspace.ReadRegularFile(root, path.Join(dir, e.Name(), skillFile), maxSkillBytes)
		if err != nil {
			continue
		}
		if s, ok := parseSkill(data, e.Name()); ok {
			out = append(out, s)
		}
	}
	return out
}

// parseSkill splits front matter from body. A skill without a name takes
// its folder's name; one without a description is still listed.
func parseSkill(data []byte, folder string) (skill, bool) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return skill{}, false
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return skill{}, false
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return skill{}, false
	}
	if fm.Name == "" {
		fm.Name = folder
	}
	body = strings.TrimLeft(strings.TrimPrefix(body, "-"), "\n")
	return skill{Name: strings.TrimSpace(fm.Name), Description: oneLine(fm.Description), Body: strings.TrimSpace(body)}, true
}

// oneLine collapses whitespace so a description fits one prompt line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// agentsMDLimit bounds the AGENTS.md text put into the system prompt.
const agentsMDLimit = 20000

// readAgentsMD returns AGENTS.md at the workspace root, capped, or "".
func readAgentsMD(workspaceDir string) string {
	root, err := os.OpenRoot(workspaceDir)
	if err != nil {
		return ""
	}
	defer root.Close()
	data, err := workspace.ReadRegularFile(root, "AGENTS.md", agentsMDLimit)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
