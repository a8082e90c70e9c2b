package fakeslack_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
)

// slack-go's three-step upload lands the file in the thread; a file never
// uploaded, or shared into a thread that does not exist, is refused.
func TestFileUploadIntoAThread(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	o := s.Options()
	api := slack.New(o.BotToken, slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("root", false))
	if err != nil {
		t.Fatal(err)
	}
	content := "diff --git a/x b/x\n+hello\n"
	f, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "h9-fix.diff", Title: "h9-fix.diff", Content: content, FileSize: len(content), Channel: "C1", ThreadTimestamp: root,
	})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	files := s.Files("C1")
	if len(files) != 1 || files[0].ID != f.ID || files[0].Name != "h9-fix.diff" || string(files[0].Content) != content || files[0].ThreadTS != root {
		t.Fatalf("files = %+v", files)
	}
	thread := s.Thread("C1", root)
	if last := thread[len(thread)-1]; len(last.Files) != 1 || last.Files[0] != f.ID {
		t.Errorf("the thread's last message %+v does not share the file", last)
	}

	if _, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: "F404"}}, Channel: "C1"}); err == nil || !strings.Contains(err.Error(), "file_not_found") {
		t.Errorf("completing an unknown file: %v", err)
	}
	u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "x.diff", FileSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C1"}); err == nil {
		t.Error("completing a file whose bytes never came succeeded")
	}
	if err := api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Content: "too long", Filename: "x.diff"}); err == nil {
		t.Error("an upload of another length than announced succeeded")
	}
	if len(s.Violations()) == 0 {
		t.Error("the wrong length was not recorded as a violation")
	}
}
