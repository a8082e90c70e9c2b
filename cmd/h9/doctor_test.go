package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// doctorEnv starts a fake Slack and a fake model and points the environment at them.
func doctorEnv(t *testing.T, modelOpts ...fakemodel.Option) (*fakeslack.Server, *fakemodel.Server) {
	t.Helper()
	testenv.Full(t, "runs every doctor check, the sandbox's live probes among them")
	slack := fakeslack.New(fakeslack.Options{BotToken: "xoxb-doctor-bot-token", AppToken: "xapp-doctor-app-token"})
	t.Cleanup(slack.Close)
	opts := []fakemodel.Option{fakemodel.WithModels("other", "gpt-test"), fakemodel.WithHandler(callsFirstTool),
		fakemodel.WithAPIKey("sk-doctor-secret-key")}
	model := fakemodel.New(append(opts, modelOpts...)...)
	t.Cleanup(model.Close)
	setEnv(t,
		"SLACK_BOT_TOKEN", "xoxb-doctor-bot-token",
		"SLACK_APP_TOKEN", "xapp-doctor-app-token",
		"SLACK_API_URL", slack.APIURL(),
		"OPENAI_BASE_URL", model.URL(),
		"OPENAI_API_KEY", "sk-doctor-secret-key",
		"H9_MODEL", "gpt-test",
		"H9_DATA_DIR", filepath.Join(t.TempDir(), "data"),
		"H9_SANDBOX", "auto",
	)
	return slack, model
}

// callsFirstTool plays a model that calls tools: it calls the first tool
// offered, then answers the tool's result in words.
func callsFirstTool(req openai.ChatCompletionRequest) fakemodel.Reply {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == openai.ChatMessageRoleTool {
		return fakemodel.Text("The word is " + req.Messages[n-1].Content)
	}
	if len(req.Tools) == 0 {
		return fakemodel.Text("OK")
	}
	return fakemodel.ToolCall(req.Tools[0].Function.Name, `{}`)
}

// doctorLines runs doctor and returns its lines keyed by check name; the
// indented lines under a check (the sandbox's guarantees) are keyed by
// "sandbox/<guarantee>".
func doctorLines(t *testing.T) (map[string]string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runDoctor(t.Context(), &out)
	lines := map[string]string{}
	parent := ""
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if sub, ok := strings.CutPrefix(l, "    "); ok {
			_, rest, _ := strings.Cut(sub, " ")
			name, _, _ := strings.Cut(rest, ":")
			lines[parent+"/"+name] = sub
			continue
		}
		_, rest, _ := strings.Cut(l, " ")
		name, _, _ := strings.Cut(rest, ":")
		lines[name], parent = l, name
	}
	for _, secret := range []string{"xoxb-doctor-bot-token", "xapp-doctor-app-token", "sk-doctor-secret-key"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("doctor printed a secret:\n%s", out.String())
		}
	}
	t.Logf("doctor output:\n%s", out.String())
	return lines, err
}

func wantMark(t *testing.T, lines map[string]string, name, mark string, contains ...string) {
	t.Helper()
	l, found := lines[name]
	if !found {
		t.Errorf("no %q line in %v", name, lines)
		return
	}
	if !strings.HasPrefix(l, mark+" ") {
		t.Errorf("%q line = %q, want mark %s", name, l, mark)
	}
	for _, c := range contains {
		if !strings.Contains(l, c) {
			t.Errorf("%q line = %q, want it to contain %q", name, l, c)
		}
	}
}

func TestDoctorAllGood(t *testing.T) {
	doctorEnv(t)
	lines, err := doctorLines(t)
	if err != nil {
		t.Fatalf("doctor failed: %v", err)
	}
	if top := topLevel(lines); top != 1+len(doctorChecks) {
		t.Errorf("%d lines, want one per check (%d)", top, 1+len(doctorChecks))
	}
	wantMark(t, lines, "configuration", "✓", "gpt-test")
	wantMark(t, lines, "Slack bot token", "✓", "auth.test ok", "UBOT")
	wantMark(t, lines, "Slack app token", "✓", "apps.connections.open ok")
	wantMark(t, lines, "model endpoint", "✓", "lists model gpt-test", "tool-calling round trip with it works")
	wantMark(t, lines, "data directory", "✓", "writable", "not locked")
	// bwrap or Landlock depends on the machine; either way it is not a failure under auto.
	if l := lines["sandbox"]; !strings.HasPrefix(l, "✓ ") && !strings.Contains(l, "⚠ sandbox: bash runs confined by Landlock") {
		t.Errorf("sandbox line = %q", l)
	}
}

func topLevel(lines map[string]string) int {
	n := 0
	for name := range lines {
		if !strings.Contains(name, "/") {
			n++
		}
	}
	return n
}

// Under bubblewrap, doctor verifies each guarantee live, one line each.
func TestDoctorVerifiesSandboxGuarantees(t *testing.T) {
	testenv.Need(t, "bwrap")
	doctorEnv(t)
	t.Setenv("H9_SANDBOX", "bwrap")
	lines, err := doctorLines(t)
	if err != nil && os.Geteuid() == 0 {
		t.Fatalf("doctor failed: %v", err)
	}
	wantMark(t, lines, "sandbox", "✓", "bubblewrap", "plan mode read-only by bwrap")
	for _, g := range []string{"no capabilities, no_new_privs", "remount refused", "data directory and host paths invisible",
		"network unreachable", "h9's /proc unreachable", "plan mode read-only", "every process reaped", "file size limit", "/tmp limit"} {
		wantMark(t, lines, "sandbox/"+g, "✓")
	}
	if os.Geteuid() == 0 {
		wantMark(t, lines, "sandbox/memory limit", "✓", "H9_SANDBOX_MEMORY=4GiB")
		wantMark(t, lines, "sandbox/process limit", "✓", "H9_SANDBOX_PIDS=1024")
	}
}

// With H9_SANDBOX=none, plan mode is still verified; execution mode is
// reported as unsandboxed, a failure (✗).
func TestDoctorSandboxNoneVerifiesPlanMode(t *testing.T) {
	doctorEnv(t, fakemodel.WithModels("gpt-test"))
	t.Setenv("H9_SANDBOX", "none")
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with H9_SANDBOX=none")
	}
	wantMark(t, lines, "sandbox", "✗", "H9_SANDBOX=none", "plan mode read-only by")
	if strings.Contains(lines["sandbox"], "by landlock") {
		wantMark(t, lines, "sandbox/plan mode read-only", "✓", "Landlock")
		wantMark(t, lines, "sandbox/no capabilities, no_new_privs", "✓", "in plan mode")
	}
}

func TestDoctorFailures(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		check    string
		contains []string
	}{
		{"wrong bot token", []string{"SLACK_BOT_TOKEN", "xoxb-wrong"}, "Slack bot token", []string{"invalid_auth", "hint: SLACK_BOT_TOKEN"}},
		{"wrong app token", []string{"SLACK_APP_TOKEN", "xapp-wrong"}, "Slack app token", []string{"invalid_auth", "hint: SLACK_APP_TOKEN", "connections:write"}},
		{"Slack unreachable", []string{"SLACK_API_URL", "http://127.0.0.1:1/api/"}, "Slack bot token", []string{"cannot reach SLACK_API_URL"}},
		{"model unreachable", []string{"OPENAI_BASE_URL", "http://127.0.0.1:1/v1"}, "model endpoint", []string{"hint: cannot reach OPENAI_BASE_URL"}},
		{"wrong key", []string{"OPENAI_API_KEY", "sk-doctor-wrong-key"}, "model endpoint", []string{"HTTP 401", "hint: check OPENAI_API_KEY"}},
		{"data dir is a file", []string{"H9_DATA_DIR", "/dev/null/h9"}, "configuration", []string{`H9_DATA_DIR="/dev/null/h9": /dev/null is a file, not a directory`}},
		{"missing template", []string{"H9_WORKSPACE_TEMPLATE", "/nonexistent/template"}, "configuration", []string{"H9_WORKSPACE_TEMPLATE=\"/nonexistent/template\" is not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doctorEnv(t)
			for i := 0; i+1 < len(tt.env); i += 2 {
				t.Setenv(tt.env[i], tt.env[i+1])
			}
			lines, err := doctorLines(t)
			if !errors.Is(err, ErrDoctorFailed) {
				t.Fatalf("err = %v, want ErrDoctorFailed", err)
			}
			wantMark(t, lines, tt.check, "✗", tt.contains...)
		})
	}
}

func TestDoctorModelNotListedButServed(t *testing.T) {
	doctorEnv(t)
	t.Setenv("H9_MODEL", "alias-model")
	lines, err := doctorLines(t)
	if err != nil {
		t.Fatal(err)
	}
	wantMark(t, lines, "model endpoint", "✓", "answered a tool-calling round trip with alias-model", "not in its models list")
}

// The commonest set-up mistake: a local server started without its
// tool-call parser. doctor names the flag; a models list could not show it.
func TestDoctorNamesTheToolParserFix(t *testing.T) {
	tests := []struct {
		name   string
		parser fakemodel.ToolParser
		want   []string
	}{
		{"llama.cpp without --jinja", fakemodel.LlamaCpp, []string{"HTTP 500", "tools param requires --jinja flag", "Fix: start llama-server with --jinja", "hint: restart the server with the fix above"}},
		{"vLLM without --enable-auto-tool-choice", fakemodel.VLLM, []string{"HTTP 400", "Fix: start vLLM with --enable-auto-tool-choice and the --tool-call-parser"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doctorEnv(t, fakemodel.WithoutToolParser(tt.parser))
			lines, err := doctorLines(t)
			if !errors.Is(err, ErrDoctorFailed) {
				t.Fatalf("err = %v, want ErrDoctorFailed", err)
			}
			wantMark(t, lines, "model endpoint", "✗", tt.want...)
		})
	}
}

// A server that parses no tool calls lets the model write the call as text.
func TestDoctorToolCallWrittenAsText(t *testing.T) {
	_, model := doctorEnv(t)
	model.Enqueue(fakemodel.Text(`<tool_call>{"name": "get_magic_word", "arguments": {}}</tool_call>`))
	lines, err := doctorLines(t)
	if !errors.Is(err, ErrDoctorFailed) {
		t.Fatalf("err = %v, want ErrDoctorFailed", err)
	}
	wantMark(t, lines, "model endpoint", "✗", "wrote its tool call as text", "--enable-auto-tool-choice", "--jinja")
}

// A model that answers without calling the tool works, but h9 needs calls.
func TestDoctorModelThatCallsNoTool(t *testing.T) {
	_, model := doctorEnv(t)
	model.Enqueue(fakemodel.Text("I do not know any magic word."))
	lines, err := doctorLines(t)
	if err != nil {
		t.Fatalf("doctor failed: %v", err)
	}
	wantMark(t, lines, "model endpoint", "⚠", "without calling the tool", "hint: h9 needs a model that calls tools")
}

// The round trip runs as configured: streamed by default, plain with
// H9_MODEL_STREAM=false.
func TestDoctorRoundTripStreamsAsConfigured(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			_, model := doctorEnv(t)
			t.Setenv("H9_MODEL_STREAM", stream)
			lines, err := doctorLines(t)
			if err != nil {
				t.Fatal(err)
			}
			wantMark(t, lines, "model endpoint", "✓", "round trip")
			reqs := model.Requests()
			if len(reqs) != 2 || reqs[1].Messages[2].Role != openai.ChatMessageRoleTool {
				t.Fatalf("requests = %+v, want the tool call and then its result", reqs)
			}
			for _, r := range reqs {
				if r.Stream != (stream == "true") {
					t.Errorf("stream = %v in a request, want %s", r.Stream, stream)
				}
			}
		})
	}
}

func TestDoctorModelListingUnsupported(t *testing.T) {
	doctorEnv(t)
	// A server with chat completions but no /models route, like some local servers.
	doctorEnv(t, fakemodel.WithoutModelsList())
	lines, err := doctorLines(t)
	if err != nil {
		t.Fatal(err)
	}
	wantMark(t, lines, "model endpoint", "✓", "answered a tool-calling round trip")
}

func TestDoctorDataDirLocked(t *testing.T) {
	doctorEnv(t)
	db, err := openDB(os.Getenv("H9_DATA_DIR"), dbLockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lines, err := doctorLines(t)
	if !errors.Is(err, ErrDoctorFailed) {
		t.Fatalf("err = %v", err)
	}
	wantMark(t, lines, "data directory", "✗", "another h9 is already using", "h9.db is locked", "hint: stop the other h9")
}

func TestDoctorConfigurationMissing(t *testing.T) {
	clearEnv(t)
	var out bytes.Buffer
	if err := runDoctor(t.Context(), &out); !errors.Is(err, ErrDoctorFailed) {
		t.Fatalf("err = %v", err)
	}
	want := "✗ configuration: SLACK_BOT_TOKEN is required — hint: see h9 -h for every setting\n"
	if out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}

func TestDoctorSandboxNone(t *testing.T) {
	doctorEnv(t, fakemodel.WithModels("gpt-test"))
	t.Setenv("H9_SANDBOX", "none")
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with H9_SANDBOX=none")
	}
	wantMark(t, lines, "sandbox", "✗", "H9_SANDBOX=none")
}

// The Landlock execution mode is a sandbox doctor verifies live: every
// guarantee it checks holds (✓ lines only), with a warning that
// bubblewrap would add namespaces.
func TestDoctorSandboxLandlock(t *testing.T) {
	doctorEnv(t, fakemodel.WithModels("gpt-test"))
	t.Setenv("H9_SANDBOX", "landlock")
	lines, _ := doctorLines(t)
	wantMark(t, lines, "sandbox", "⚠", "confined by Landlock")
	for name, l := range lines {
		if strings.HasPrefix(name, "sandbox/") && strings.HasPrefix(l, "✗") {
			t.Errorf("doctor: %s", l)
		}
	}
}

func TestDoctorExitCode(t *testing.T) {
	doctorEnv(t)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-wrong")
	var out, errOut bytes.Buffer
	if code := realMain([]string{"doctor"}, &out, &errOut); code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q: doctor's findings go to stdout only", errOut.String())
	}
}
