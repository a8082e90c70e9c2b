package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/textcut"
)

// tool is one function the model can call. Each lives in its own file
// with its name, params, description and schema side by side.
type tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
	Mutating    bool // goes through the approval hook in auto-edit mode
	PlanSafe    bool // offered in plan mode (an external tool that only reads)
	// UsesWorkspace: call opens (and so creates) the session's workspace
	// before Run, so Run and Preview find it in env.ws.
	UsesWorkspace bool
	// Summary renders the call for a status line ("go test ./...", "main.go").
	Summary func(args string) string
	Run     func(ctx context.Context, env *toolEnv, args string) toolResult
	// Preview shows a mutating call to the approver without doing it.
	Preview func(env *toolEnv, args string) (string, error)
}

// toolEnv is what a tool may touch during one run.
type toolEnv struct {
	sessionID string
	wsm       *workspace.Manager
	ws        *workspace.Workspace // nil until a tool that uses it is called
	readOnly  bool                 // plan mode: bash runs read-only
	todos     *planning.TodoStore  // saved by the run, with the step's commit
	work      *planning.WorkLog    // the work rule's log: in the run's state, stored with the todos
	skills    []skill
	share     FileSharer // share_file's upload; nil: none
}

// openWorkspace opens (creating it) the session's workspace into env.ws,
// once per run.
func (env *toolEnv) openWorkspace() error {
	if env.ws != nil {
		return nil
	}
	ws, err := env.wsm.Open(env.sessionID)
	if err != nil {
		return fmt.Errorf("opening the workspace: %w", err)
	}
	env.ws = ws
	return nil
}

// close releases the workspace if a tool opened it.
func (env *toolEnv) close() error {
	if env.ws == nil {
		return nil
	}
	return env.ws.Close()
}

// toolResult is what goes back to the model (and, shortened, to events).
type toolResult struct {
	Output  string
	IsError bool
	// Exit is a command's exit code: it ran, whatever its outcome.
	Exit *int
	// TodosChanged is set by an accepted todo_write; Todos is the new list
	// and Completed the ids it moved to completed. The run persists it and
	// then emits the snapshot (see run.runTool).
	TodosChanged bool
	Todos        []planning.TodoItem
	Completed    []string
	// Images are an external tool's images, sent as image parts when the
	// model sees images (vision_tools.go); Output names them.
	Images [][]byte
}

func ok(s string) toolResult { return toolResult{Output: s} }

// fail is a model-facing error: the model reads it and corrects itself.
func fail(err error) toolResult { return toolResult{Output: "Error: " + err.Error(), IsError: true} }

func failf(format string, a ...any) toolResult { return fail(fmt.Errorf(format, a...)) }

// registry lists every tool in the order the model sees them.
var registry = []*tool{&readFileTool, &writeFileTool, &editFileTool, &bashTool, &todoWriteTool, &useSkillTool, &shareFileTool}

// planModeWhitelist is the Planning module's filterReadOnlyTools list: in plan mode
// write_file and edit_file do not exist for the model.
var planModeWhitelist = map[string]bool{
	readFileName:  true,
	bashName:      true,
	useSkillName:  true,
	todoWriteName: true,
	shareFileName: true,
}

// toolset is the tools one run may use. Plan mode is this one filter: the
// definitions sent to the model and the calls accepted come from the same
// list, so a tool hidden from the model is also refused when called.
type toolset struct {
	byName map[string]*tool
	defs   []openai.Tool
	mode   planning.PlanMode
}

// newToolset builds the toolset for a mode; approve is used only in
// auto-edit mode, where nil approves everything. The definitions sent to
// the model are built once per mode (toolDefs), not per run.
func newToolset(mode planning.PlanMode, approve Approver) *toolset {
	ts := &toolset{byName: make(map[string]*tool, len(registry)), mode: mode, defs: toolDefs(mode)}
	for _, t := range registry {
		if !toolInMode(t, mode) {
			continue
		}
		if mode == planning.PlanModeAutoEdit && t.Mutating && approve != nil {
			t = withApproval(t, approve)
		}
		ts.byName[t.Name] = t
	}
	return ts
}

// toolInMode is the plan-mode filter.
func toolInMode(t *tool, mode planning.PlanMode) bool {
	return mode != planning.PlanModePlan || planModeWhitelist[t.Name] || t.PlanSafe
}

// defsByMode caches each mode's definitions, with compact schemas: every
// step's request carries them, so fewer bytes to encode, send and parse.
// Shared read-only by every run of that mode.
var defsByMode sync.Map // planning.PlanMode → []openai.Tool

func toolDefs(mode planning.PlanMode) []openai.Tool {
	if defs, ok := defsByMode.Load(mode); ok {
		return defs.([]openai.Tool)
	}
	var defs []openai.Tool
	for _, t := range registry {
		if toolInMode(t, mode) {
			defs = append(defs, definition(t))
		}
	}
	defs = slices.Clip(defs)
	if won, loaded := defsByMode.LoadOrStore(mode, defs); loaded {
		return won.([]openai.Tool)
	}
	openai.KeepEncoded(defs)
	return defs
}

func definition(t *tool) openai.Tool {
	schema := t.Schema
	var buf bytes.Buffer
	if json.Compact(&buf, schema) == nil {
		schema = buf.Bytes()
	}
	return openai.Tool{Name: t.Name, Description: t.Description, Parameters: schema}
}

// call runs one tool call. Unknown or refused tools are error results.
func (ts *toolset) call(ctx context.Context, env *toolEnv, name, args string) toolResult {
	t, found := ts.byName[name]
	if !found {
		if slices.ContainsFunc(registry, func(t *tool) bool { return t.Name == name }) {
			return failf("%s is not available in %s mode, which is read-only; use only %s", name, ts.mode, ts.names())
		}
		return failf("unknown tool %q; the available tools are %s", name, ts.names())
	}
	if t.UsesWorkspace {
		if err := env.openWorkspace(); err != nil {
			return fail(err)
		}
	}
	res := t.Run(ctx, env, args)
	res.Output = capOutput(res.Output)
	return res
}

func (ts *toolset) names() string {
	names := make([]string, 0, len(ts.defs))
	for _, d := range ts.defs {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// summary is the short argument summary for events and approvals.
func (ts *toolset) summary(name, args string) string {
	if t, found := ts.byName[name]; found && t.Summary != nil {
		return short(t.Summary(args))
	}
	return short(name)
}

// errMissing is wrapped by parseArgs for an absent required argument.
var errMissing = errors.New("missing required argument")

// parseArgs decodes the model's JSON arguments into dst and checks that the
// required keys are present. Errors are worded for the model.
func parseArgs(args string, dst any, required ...string) error {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &keys); err != nil {
		return fmt.Errorf("the arguments are not a valid JSON object (%v); send them again as JSON", err)
	}
	for _, k := range required {
		if v, present := keys[k]; !present || string(v) == "null" {
			return fmt.Errorf("%w %q", errMissing, k)
		}
	}
	if err := json.Unmarshal([]byte(args), dst); err != nil {
		return fmt.Errorf("the arguments do not match the schema: %v", err)
	}
	return nil
}

// summaryOf extracts one string argument for a status line; "" on failure.
func summaryOf(args, key string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// maxToolOutput caps what one tool result sends to the model; the head and
// the tail are kept, since errors tend to be at the end of output.
const maxToolOutput = 30000

func capOutput(s string) string { return capText(s, maxToolOutput) }

// capText cuts s to about limit bytes, keeping its head and its tail.
func capText(s string, limit int) string { return textcut.HeadTail(s, limit) }
