package fakeslack

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// A shared file is served, and described by files.info, to the bot token
// only: without it the download is Slack's sign-in page (200, HTML) and
// files.info an auth error.
func TestSharedFilesNeedTheBotToken(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	url := s.ShareFile("U1", UserFile{Name: "a.log", Mimetype: "text/plain", Content: []byte("hello")})
	get := func(token string) (string, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Content-Type"), string(body)
	}
	if ct, body := get(s.Options().BotToken); body != "hello" || ct != "text/plain" {
		t.Errorf("with the bot token: %s %q", ct, body)
	}
	for _, token := range []string{"", s.Options().AppToken, "xoxb-other"} {
		if ct, body := get(token); !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "Sign in") {
			t.Errorf("token %q: %s %q, want the sign-in page", token, ct, body)
		}
	}
	if ids, refused := s.Downloads(); len(ids) != 1 || refused != 3 {
		t.Errorf("downloads %v, refused %d; want 1 and 3", ids, refused)
	}
	id := url[strings.Index(url, "-F")+1 : strings.LastIndex(url, "/")]
	f, _, _, err := slack.New(s.Options().BotToken, slack.OptionAPIURL(s.APIURL())).GetFileInfoContext(context.Background(), id, 0, 0)
	if err != nil || f.Name != "a.log" || f.URLPrivateDownload != url || f.Size != 5 {
		t.Errorf("files.info = %+v, %v", f, err)
	}
	if _, _, _, err := slack.New("xoxb-other", slack.OptionAPIURL(s.APIURL())).GetFileInfoContext(context.Background(), id, 0, 0); err == nil {
		t.Error("files.info answered another token")
	}
}
