package agent

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"net/http"
	"strings"
)

// An external tool's images (an MCP result's, mcp.Result.Images) go to a
// model that sees images the way a thread's pasted images do (vision.go):
// as image parts of a user message, with this run's requests only, scaled
// to the same limits; the stored history keeps the message's text. Chat
// completions takes image parts in user messages only, so they follow the
// step's tool messages in one user message of their own. A model that
// does not see them reads the result's text, which names each image.

// toolImagesNote starts the user message carrying a step's tool images.
const toolImagesNote = "[Images returned by "

// maxRunToolImages bounds the tool images this run's requests carry: each
// request re-sends them, so only the latest are kept as images.
const maxRunToolImages = 8

// toolImage is one image of a tool's result.
type toolImage struct {
	tool string
	data []byte
}

// toolImagesMessage is the user message with a step's tool images, or
// false when there are none to send (vision off, none decodable).
func (r *run) toolImagesMessage(images []toolImage) (Message, bool) {
	if len(images) == 0 || !r.visionOn() {
		return Message{}, false
	}
	var urls, tools []string
	for _, img := range images {
		url, err := toolImageURL(img.data)
		if err != nil {
			r.e.log.Warn("a tool's image not sent as an image", "session", r.id, "tool", img.tool, "err", err)
			continue
		}
		urls = append(urls, url)
		tools = append(tools, img.tool)
	}
	if len(urls) == 0 {
		return Message{}, false
	}
	if len(urls) > maxRunToolImages {
		urls = urls[len(urls)-maxRunToolImages:]
	}
	r.keepLatestToolImages(maxRunToolImages - len(urls))
	text := fmt.Sprintf("%s%s, in their order; the results above name them.]", toolImagesNote, strings.Join(tools, ", "))
	return Message{Role: RoleUser, Content: text, Images: urls}, true
}

// keepLatestToolImages drops the images of older tool-image messages of
// the run beyond the latest n (their text stays).
func (r *run) keepLatestToolImages(n int) {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		m := &r.msgs[i]
		if m.Role != RoleUser || !strings.HasPrefix(m.Content, toolImagesNote) || len(m.Images) == 0 {
			continue
		}
		if n <= 0 {
			m.Images = nil
			continue
		}
		if len(m.Images) > n {
			m.Images = m.Images[len(m.Images)-n:]
		}
		n -= len(m.Images)
	}
}

// toolImageURL is a tool's image as a data URL: a PNG, JPEG, GIF or WebP
// by its content, always drawn again (scaled to the common limits), so
// that nothing but its pixels — no metadata a server put in — reaches the
// model.
func toolImageURL(data []byte) (string, error) {
	if len(data) > maxImageBytes {
		return "", errors.New("too large to send as an image")
	}
	kind := http.DetectContentType(data)
	switch kind {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return "", fmt.Errorf("not an image the model takes (%s)", kind)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	w, h := scaledSize(cfg.Width, cfg.Height)
	data, kind, err = redrawImage(data, kind, cfg, w, h)
	if err != nil {
		return "", err
	}
	return "data:" + kind + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}
