package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
)

const (
	demoUser, demoChannel = "U0DEMO1", "C0DEMO1"
	demoBotToken          = "xoxb-demo"
	demoAppToken          = "xapp-demo"
	demoGitHubToken       = "ghp_demo"
	demoTask              = "[repo=hello] add a greeting to the README"
)

// demo is one run: the fakes, the h9 process and the thread's printer.
type demo struct {
	ctx    context.Context
	dir    string
	slack  *fakeslack.Server
	model  *fakemodel.Server
	gh     *fakegithub.Server
	thread *threadPrinter
}

// runDemo plays one session from /h9 plan to the pull request.
func runDemo(ctx context.Context, bin string, out io.Writer) error {
	dir, err := os.MkdirTemp("", "h9-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		if bin, err = buildH9(ctx, dir); err != nil {
			return err
		}
	}
	d := &demo{ctx: ctx, dir: dir,
		slack: fakeslack.New(fakeslack.Options{BotToken: demoBotToken, AppToken: demoAppToken, EchoBotMessages: true, EchoEdits: true}),
		model: fakemodel.New(fakemodel.WithModels("demo-model")),
		gh:    fakegithub.New(demoGitHubToken),
	}
	defer d.slack.Close()
	defer d.model.Close()
	defer d.gh.Close()
	d.slack.AddChannel(demoChannel, "general")
	d.slack.AddUser(demoUser, "alice")
	remote, err := makeRemote(ctx, dir)
	if err != nil {
		return err
	}
	d.gh.AddRepo("acme/hello", remote, true)
	stop, err := d.startH9(bin, remote)
	if err != nil {
		return err
	}
	defer stop()
	return d.session(out)
}

// session drives the thread: plan, approve, work, open the pull request.
func (d *demo) session(out io.Writer) error {
	d.model.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"cat README.md"}`),
		fakemodel.ToolCall("todo_write", todoArgs("pending", "pending")),
		fakemodel.Text("Plan: add a greeting line to README.md, then check it is there."),
	)
	fmt.Fprintf(out, "alice: /h9 plan %s\n\n", demoTask)
	if _, err := d.slack.SlashCommand(d.ctx, fakeslack.SlashCommand{Text: "plan " + demoTask, UserID: demoUser, ChannelID: demoChannel}); err != nil {
		return err
	}
	root, err := d.waitRoot()
	if err != nil {
		return err
	}
	d.thread = newThreadPrinter(d.slack, demoChannel, root, out)
	review, err := d.thread.waitFor(d.ctx, render.ActionApproveAuto)
	if err != nil {
		return err
	}
	d.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("in_progress", "pending")),
		fakemodel.ToolCall("edit_file", `{"path":"README.md","old_string":"# hello\n","new_string":"# hello\n\nHello, world!\n"}`),
		fakemodel.ToolCall("todo_write", todoArgs("completed", "in_progress")),
		fakemodel.ToolCall("bash", `{"command":"sleep 2; grep -c 'Hello, world!' README.md"}`),
		fakemodel.ToolCall("todo_write", todoArgs("completed", "completed")),
		fakemodel.Text("Added the greeting to README.md; grep finds it once."),
	)
	if err := d.thread.click(d.ctx, demoUser, review, render.ActionApproveAuto, render.LabelApproveAuto); err != nil {
		return err
	}
	outcome, err := d.thread.waitFor(d.ctx, render.ActionOpenPR)
	if err != nil {
		return err
	}
	if err := d.thread.click(d.ctx, demoUser, outcome, render.ActionOpenPR, render.LabelOpenPR); err != nil {
		return err
	}
	if _, err := d.thread.waitFor(d.ctx, "h9 follows PR #1 now"); err != nil {
		return err
	}
	if pulls := d.gh.Pulls("acme/hello"); len(pulls) == 1 {
		fmt.Fprintf(out, "(fake GitHub: pull request #%d %q from %s)\n\n", pulls[0].Number, pulls[0].Title, pulls[0].Head)
	}
	return d.review(out)
}

// review is the loop after the pull request: a reviewer's comment on the
// fake GitHub comes back to the thread, alice has it addressed, and h9
// pushes and answers on the pull request.
func (d *demo) review(out io.Writer) error {
	d.gh.SetPermission("bob", "write")
	fmt.Fprintf(out, "(fake GitHub: bob comments on README.md line 3: \"Add an exclamation of joy.\")\n\n")
	d.gh.AddInline("acme/hello", 1, "bob", "README.md", 3, "@@ -1 +1,3 @@\n # hello\n+\n+Hello, world!", "Add an exclamation of joy.", 0)
	batch, err := d.thread.waitFor(d.ctx, render.ActionAddressFeedback)
	if err != nil {
		return err
	}
	d.model.Enqueue(
		fakemodel.ToolCall("edit_file", `{"path":"README.md","old_string":"Hello, world!\n","new_string":"Hello, world! :tada:\n"}`),
		fakemodel.Text("Added the exclamation of joy."),
	)
	if err := d.thread.click(d.ctx, demoUser, batch, render.ActionAddressFeedback, render.LabelAddressFeedback); err != nil {
		return err
	}
	if _, err := d.thread.waitFor(d.ctx, "Answered on PR #1"); err != nil {
		return err
	}
	if err := d.thread.waitGone(d.ctx, render.ActionStop); err != nil {
		return err
	}
	for _, c := range d.gh.Written("acme/hello", 1) {
		what := "a comment on the pull request"
		if c.InReplyTo != 0 {
			what = "a reply to bob's comment"
		}
		fmt.Fprintf(out, "(fake GitHub: h9 wrote %s: %q)\n", what, firstLine(c.Body))
	}
	return nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func todoArgs(first, second string) string {
	return `{"todos":[{"id":"1","content":"Add a greeting to README.md","status":"` + first +
		`"},{"id":"2","content":"Check the greeting is there","status":"` + second + `"}]}`
}

func (d *demo) waitRoot() (string, error) {
	for {
		for _, m := range d.slack.Messages(demoChannel) {
			if m.ThreadTS == "" && m.BotID != "" {
				return m.TS, nil
			}
		}
		if err := pause(d.ctx); err != nil {
			return "", fmt.Errorf("no session started: %w", err)
		}
	}
}

// startH9 runs h9 on the fakes; its log goes to h9.log in the demo's directory.
func (d *demo) startH9(bin, remote string) (func(), error) {
	repos := filepath.Join(d.dir, "repos.yml")
	if err := os.WriteFile(repos, []byte("repos:\n  - name: hello\n    url: "+remote+"\n    github: acme/hello\n"), 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(d.dir, "h9.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + d.dir,
		"SLACK_BOT_TOKEN=" + demoBotToken, "SLACK_APP_TOKEN=" + demoAppToken, "SLACK_API_URL=" + d.slack.APIURL(),
		"OPENAI_BASE_URL=" + d.model.URL(), "H9_MODEL=demo-model",
		"H9_DATA_DIR=" + filepath.Join(d.dir, "data"), "H9_COALESCE_INTERVAL=200ms",
		"H9_REPOS_FILE=" + repos, "H9_FORGE_POLL=10s", "H9_GITHUB_TOKEN=" + demoGitHubToken, "H9_GITHUB_API_URL=" + d.gh.URL(),
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		logFile.Close()
	}
	return stop, nil
}

// buildH9 builds ./cmd/h9 of this module into dir.
func buildH9(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "h9")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/h9-app/h9/cmd/h9").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building h9: %v\n%s", err, out)
	}
	return bin, nil
}

// makeRemote is the repository the session works on: a bare one with a README.
func makeRemote(ctx context.Context, dir string) (string, error) {
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "hello.git")
	steps := [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "add", "README.md"},
		{"-C", work, "-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-q", "-m", "first"},
		{"clone", "-q", "--bare", work, bare},
	}
	for i, args := range steps {
		if i == 1 {
			if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("# hello\n"), 0o644); err != nil {
				return "", err
			}
		}
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return bare, nil
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}
