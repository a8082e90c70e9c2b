package bot

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace"
)

// attachmentPath is where a file shared on message ts lands.
func (e *env) attachmentPath(ts, name string) string {
	e.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(e.wsRoot, "*"))
	for _, d := range dirs {
		p := filepath.Join(d, ".h9", "attachments", ts+"-"+name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// A reply with files while a run is in flight is queued with its files;
// when its run starts they are downloaded with the bot token into
// .h9/attachments/<ts>-<name>, and the request names their paths. A file
// whose name would leave the folder is taken under a safe name inside it;
// one over H9_ATTACHMENT_MAX and one Slack will not serve are named in the
// thread with the reason; the rest of the message still reaches the agent.
func TestRepliedFilesReachTheAgent(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AttachmentMax = 1 << 10 })
	replies := gate(t, e)
	thread := e.startSession("run", "look at the bug")
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })

	log := bytes.Repeat([]byte("panic: nil map\n"), 20)
	ts, err := e.slack.PostUserFiles(e.ctx, testUser, testChannel, thread, "here is the log", []fakeslack.UserFile{
		{Name: "app.log", Mimetype: "text/plain", Content: log},
		{Name: "../../escape.sh", Mimetype: "text/plain", Content: []byte("rm -rf /")},
		{Name: "big.bin", Mimetype: "application/octet-stream", Content: make([]byte, 2<<10)},
		{Name: "gone.txt", Mimetype: "text/plain", Content: []byte("x"), Missing: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	refused := e.waitMessage(thread, "did not take one file", 1)
	if want := "`big.bin`: it is 2.0 KiB, over the 1.0 KiB limit (H9_ATTACHMENT_MAX)"; !strings.Contains(refused.Text, want) || strings.Contains(refused.Text, "escape.sh") {
		t.Errorf("refusal %q: want only %q", refused.Text, want)
	}
	e.waitFor("the queued reaction", func() bool {
		m, _ := e.slack.Message(testChannel, ts)
		return slices.Contains(m.Reactions, reactionQueued)
	})
	if ids, _ := e.slack.Downloads(); len(ids) != 0 {
		t.Errorf("files were downloaded before their run: %v", ids)
	}

	replies <- fakemodel.Text("first part done")
	e.waitFor("the queued reply's run", func() bool { return e.model.Calls() == 2 })
	failed := e.waitMessage(thread, "could not download one file", 1)
	if !strings.Contains(failed.Text, "`gone.txt`: it was not served (Slack answered 404 Not Found)") {
		t.Errorf("download failure %q does not name the file and the reason", failed.Text)
	}
	got := e.lastUserMessage(1)
	want := ".h9/attachments/" + ts + "-app.log"
	if !strings.HasPrefix(got, "here is the log") || !strings.Contains(got, want) || strings.Contains(got, "gone.txt") {
		t.Errorf("the request %q does not name %s (and only the files downloaded)", got, want)
	}
	escaped := ".h9/attachments/" + ts + "-.._.._escape.sh"
	if !strings.Contains(got, escaped+" (shared as \"../../escape.sh\")") {
		t.Errorf("the request %q does not name %s with its shared name", got, escaped)
	}
	if data, err := os.ReadFile(e.attachmentPath(ts, ".._.._escape.sh")); err != nil || string(data) != "rm -rf /" {
		t.Errorf("the file shared as ../../escape.sh: %q, %v; want it inside the attachments folder", data, err)
	}
	p := e.attachmentPath(ts, "app.log")
	if data, err := os.ReadFile(p); err != nil || !bytes.Equal(data, log) {
		t.Errorf("the workspace's %s = %d bytes, %v; want the shared log", want, len(data), err)
	}
	if _, refusedDownloads := e.slack.Downloads(); refusedDownloads != 0 {
		t.Errorf("%d downloads came without the bot token", refusedDownloads)
	}
	replies <- fakemodel.Text("read it")
	e.waitMessage(thread, "read it", 1)
}

// The @h9 mention that starts a session brings its files: the session's
// first request names them.
func TestMentionFilesStartTheSession(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("plan ready"))
	ts, err := e.slack.MentionFiles(e.ctx, testUser, testChannel, "", "fix what the screenshot shows",
		[]fakeslack.UserFile{{Name: "shot.txt", Mimetype: "text/plain", Content: []byte("error 500")}})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })
	got := e.lastUserMessage(0)
	if !strings.Contains(got, "fix what the screenshot shows") || !strings.Contains(got, ".h9/attachments/"+ts+"-shot.txt") {
		t.Errorf("first request %q does not name the mention's file", got)
	}
	if ids, _ := e.slack.Downloads(); len(ids) != 1 {
		t.Errorf("downloads = %v, want the one file once (the mention's two events are one message)", ids)
	}
}

// Slack's sign-in page (what an app without files:read, or a wrong token,
// gets instead of the file), a link off Slack, and a file larger than
// announced are refused with the reason and leave nothing in the
// workspace; the token goes to Slack's own hosts only.
func TestAttachmentDownloadRefusals(t *testing.T) {
	e := newEnv(t)
	wsm, err := workspace.NewManager(workspace.Config{Root: t.TempDir(), Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := wsm.Open("s1")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	good := e.slack.ShareFile(testUser, fakeslack.UserFile{Name: "a.log", Mimetype: "text/plain", Content: []byte("hello")})
	wrong := &Bot{cfg: Config{BotToken: "xoxb-other", APIURL: e.slack.APIURL(), AttachmentMax: 1 << 20}, files: http.DefaultClient}
	right := &Bot{cfg: Config{BotToken: e.slack.Options().BotToken, APIURL: e.slack.APIURL(), AttachmentMax: 1 << 20}, files: http.DefaultClient}
	for _, c := range []struct {
		b    *Bot
		f    agent.Attachment
		want string
	}{
		{wrong, agent.Attachment{Path: ".h9/attachments/1.1-a.log", Name: "a.log", Size: 5, Source: good}, "Slack sent a sign-in page"},
		{right, agent.Attachment{Path: ".h9/attachments/1.2-a.log", Name: "a.log", Size: 5, Source: "https://attacker.example/a.log"}, "does not lead to Slack"},
		{right, agent.Attachment{Path: ".h9/attachments/1.3-a.log", Name: "a.log", Size: 4, Source: good}, "it came as 5 bytes, not the 4 Slack announced"},
	} {
		err := c.b.fetchAttachment(e.ctx, ws, c.f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s from %s: %v, want %q", c.f.Path, c.f.Source, err, c.want)
		}
		if _, statErr := os.Stat(filepath.Join(ws.Dir(), c.f.Path)); statErr == nil {
			t.Errorf("%s was left in the workspace", c.f.Path)
		}
	}
	if err := right.fetchAttachment(e.ctx, ws, agent.Attachment{Path: ".h9/attachments/1.4-a.log", Name: "a.log", Size: 5, Source: good}); err != nil {
		t.Errorf("the bot token's download: %v", err)
	}
}

// A reply with files queued behind a run, then a restart: the resumed
// run goes on, and the queued reply's run downloads its files and names
// them; nothing is downloaded before, nothing is lost.
func TestQueuedFilesSurviveARestart(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todos("a:in_progress")), fakemodel.Text("never").WithLatency(time.Minute))
	thread := e.startSession("run", "long haul")
	e.waitFor("the slow model request", func() bool { return e.model.Calls() == 2 })
	ts, err := e.slack.PostUserFiles(e.ctx, testUser, testChannel, thread, "also this log",
		[]fakeslack.UserFile{{Name: "late.log", Mimetype: "text/plain", Content: []byte("late")}})
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("the queued reaction", func() bool {
		m, _ := e.slack.Message(testChannel, ts)
		return slices.Contains(m.Reactions, reactionQueued)
	})

	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Finished after restart."), fakemodel.Text("read the late log"))
	e.restart()
	e.waitMessage(thread, "read the late log", 1)
	if got := e.lastUserMessage(-1); !strings.Contains(got, ".h9/attachments/"+ts+"-late.log") {
		t.Errorf("the queued reply ran as %q, without its file", got)
	}
	if p := e.attachmentPath(ts, "late.log"); p == "" {
		t.Error("the queued file is not in the workspace")
	}
	if ids, _ := e.slack.Downloads(); len(ids) != 1 {
		t.Errorf("downloads = %v, want the one file once", ids)
	}
}
