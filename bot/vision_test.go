package bot

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace/testenv"
)

// pngOf is a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageParts are the image_url parts of a request's messages.
func imageParts(req openai.ChatCompletionRequest) []string {
	var urls []string
	for _, m := range req.Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
				urls = append(urls, p.ImageURL.URL)
			}
		}
	}
	return urls
}

// A shared image (known by its content: it is named .txt) reaches the
// model as an image_url part with a data URL, scaled to the endpoints'
// common limits; the next run's history keeps its path, not its bytes.
func TestSharedImageReachesTheModel(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("first look"), fakemodel.Text("I see a blank page"), fakemodel.Text("still here"))
	thread := e.startSession("plan", "what is wrong")
	e.waitMessage(thread, "first look", 1)
	if _, err := e.slack.PostUserFiles(e.ctx, testUser, testChannel, thread, "this page", []fakeslack.UserFile{
		{Name: "page.txt", Mimetype: "text/plain", Content: pngOf(t, 3000, 1000)},
	}); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, "I see a blank page", 1)
	urls := imageParts(e.model.Requests()[1])
	if len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/png;base64,") {
		t.Fatalf("image parts = %d, want one PNG data URL", len(urls))
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(urls[0], "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 2048 || cfg.Height != 683 {
		t.Errorf("sent image %dx%d (%v), want 3000x1000 scaled to 2048x683", cfg.Width, cfg.Height, err)
	}
	if !strings.Contains(string(e.model.Bodies()[1]), `"type":"image_url","image_url":{"url":"data:image/png;base64,`) {
		t.Error("the raw request lacks the image_url part")
	}
	e.reply(testUser, thread, "and now?")
	e.waitMessage(thread, "still here", 1)
	last := e.model.Requests()[2]
	if n := len(imageParts(last)); n != 0 || strings.Contains(string(e.model.Bodies()[2]), "base64") {
		t.Errorf("a later run re-sent the image (%d parts)", n)
	}
	if !strings.Contains(e.lastUserMessage(1), ".h9/attachments/") {
		t.Errorf("the image's turn does not name its path: %q", e.lastUserMessage(1))
	}
}

// A text-only endpoint's 400 for image parts: the request goes again
// without them, the thread is told once, and no image is sent again.
func TestTextOnlyEndpointRefusesImages(t *testing.T) {
	for name, flavor := range map[string]fakemodel.TextOnly{"openai": fakemodel.TextOnlyOpenAI, "vllm": fakemodel.TextOnlyVLLM} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.model.SetTextOnly(flavor)
			e.model.Enqueue(fakemodel.Text("plan without the picture"), fakemodel.Text("second answer"))
			ts, err := e.slack.MentionFiles(e.ctx, testUser, testChannel, "", "fix the layout",
				[]fakeslack.UserFile{{Name: "shot.png", Mimetype: "image/png", Content: pngOf(t, 40, 30)}})
			if err != nil {
				t.Fatal(err)
			}
			e.waitMessage(ts, "plan without the picture", 1)
			reqs := e.model.Requests()
			if len(reqs) != 2 || len(imageParts(reqs[0])) != 1 || len(imageParts(reqs[1])) != 0 {
				t.Fatalf("requests = %d; want the refused one with the image, then one without", len(reqs))
			}
			if !strings.Contains(e.lastUserMessage(1), ".h9/attachments/"+ts+"-shot.png") {
				t.Errorf("the re-sent request %q lacks the image's path", e.lastUserMessage(1))
			}
			e.waitMessage(ts, "does not take images", 1)
			if _, err := e.slack.PostUserFiles(e.ctx, testUser, testChannel, ts, "another", []fakeslack.UserFile{
				{Name: "two.png", Mimetype: "image/png", Content: pngOf(t, 10, 10)}}); err != nil {
				t.Fatal(err)
			}
			e.waitMessage(ts, "second answer", 1)
			if reqs := e.model.Requests(); len(reqs) != 3 || len(imageParts(reqs[2])) != 0 {
				t.Errorf("after the refusal: %d requests, the last with %d images; want 3 and none", len(reqs), len(imageParts(reqs[len(reqs)-1])))
			}
			if n := len(e.botMessages(ts, "does not take images")); n != 1 {
				t.Errorf("the thread was told %d times, want once", n)
			}
		})
	}
}
