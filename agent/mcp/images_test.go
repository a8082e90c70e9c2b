package mcp_test

import (
	"bytes"
	"encoding/base64"
	"image"
	_ "image/png"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/mcp/mcptest"
	"github.com/h9-app/h9/planning"
	openai "github.com/sashabaranov/go-openai"
)

// lastImages are the image parts of the model's last request.
func (h *harness) lastImages() []string {
	reqs := h.model.Requests()
	var urls []string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
				urls = append(urls, p.ImageURL.URL)
			}
		}
	}
	return urls
}

// An MCP result's image reaches a model that sees images as an image
// part, scaled to the limits pasted images have and drawn again (nothing
// the server hid in it besides pixels); the tool result still names it.
func TestImageResultsAsImageParts(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0, func(_ *mcp.Options, c *agent.Config) { c.Vision = agent.VisionOn })
	h.mgr.Start()
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("team__picture", `{}`), fakemodel.Text("done"))
	if got := h.toolResults(); len(got) != 1 || !strings.Contains(got[0], "a chart") || !strings.Contains(got[0], "[image: image/png") {
		t.Errorf("the tool result: %q", got)
	}
	urls := h.lastImages()
	if len(urls) != 1 {
		t.Fatalf("%d image parts in the request after the call, want 1", len(urls))
	}
	data, found := strings.CutPrefix(urls[0], "data:image/png;base64,")
	if !found {
		t.Fatalf("image part %.40q… is not a PNG data URL", urls[0])
	}
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	if max(cfg.Width, cfg.Height) > 2048 || min(cfg.Width, cfg.Height) > 768 {
		t.Errorf("the 3000×1200 image went as %d×%d: not scaled to the limits", cfg.Width, cfg.Height)
	}
	if bytes.Contains(png, []byte(mcptest.PictureMetadata)) {
		t.Error("the server's metadata chunk reached the model")
	}
	h.noToken()
}

// With vision off, or once a text-only endpoint refused image parts
// (auto), the image is only named in the result.
func TestImageResultsNamedWithoutVision(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	for _, c := range []struct {
		vision   agent.Vision
		textOnly fakemodel.TextOnly
	}{{agent.VisionOff, fakemodel.TakesImages}, {agent.VisionAuto, fakemodel.TextOnlyOpenAI}} {
		h := newHarness(t, "none", remoteServer(t, srv.URL), 0, func(_ *mcp.Options, cfg *agent.Config) { cfg.Vision = c.vision })
		h.model.SetTextOnly(c.textOnly)
		h.mgr.Start()
		h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, call("team__picture", `{}`), fakemodel.Text("done"))
		if urls := h.lastImages(); len(urls) != 0 {
			t.Errorf("vision %s: %d image parts sent", c.vision, len(urls))
		}
		if got := h.toolResults(); len(got) != 1 || !strings.Contains(got[0], "[image: image/png") {
			t.Errorf("vision %s: the tool result does not name the image: %q", c.vision, got)
		}
	}
}

// Every request of a run re-sends its images: only the latest eight tool
// images go as images, the older ones stay named in their results.
func TestImageResultsLatestEightPerRun(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0, func(_ *mcp.Options, c *agent.Config) { c.Vision = agent.VisionOn })
	h.mgr.Start()
	var replies []fakemodel.Reply
	for range 5 {
		replies = append(replies, fakemodel.Reply{Calls: []fakemodel.Call{{Name: "team__icon", Args: `{}`}, {Name: "team__icon", Args: `{}`}}})
	}
	h.run("s1", planning.PlanModeDefault, agent.RunOptions{}, append(replies, fakemodel.Text("done"))...)
	if n := len(h.lastImages()); n != 8 {
		t.Errorf("the last request carries %d images of the run's 10, want the latest 8", n)
	}
	if got := h.toolResults(); len(got) != 10 || !strings.Contains(got[0], "[image: image/png") {
		t.Errorf("the results do not name every image: %q", got)
	}
}
