package agent

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	_ "image/gif" // image.Decode reads GIF
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"regexp"

	"github.com/h9-app/h9/agent/openai"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // image.Decode reads WebP
)

// Vision says whether images shared with a request go to the model.
type Vision string

const (
	VisionAuto Vision = "auto"  // send them until the endpoint refuses image parts
	VisionOn   Vision = "true"  // always send them
	VisionOff  Vision = "false" // never send them
)

// Images go only with the user message of the run they arrive in (each of
// that run's steps re-sends it); the stored history keeps the message's
// text, which names their paths, so a history stays small however many
// screenshots a session gets, and a later run can read_file the path.

// The endpoints' common limits: OpenAI fits an image within 2048×2048,
// then its short side within 768 (others are as large or larger), so a
// larger image costs bytes and tokens for nothing.
const (
	maxImageSide      = 2048
	maxImageShortSide = 768
	// maxImagePixels refuses to decode what would take far more memory
	// than the file (a decompression bomb).
	maxImagePixels = 40 << 20
	maxImageBytes  = 20 << 20
)

// visionOn reports whether this run sends images.
func (r *run) visionOn() bool {
	switch r.e.cfg.Vision {
	case VisionOff:
		return false
	case VisionOn:
		return true
	}
	return !r.e.noImages.Load()
}

// withImages attaches the request's images to its user message.
func (r *run) withImages(m Message) Message {
	if len(r.opts.Files) == 0 || !r.visionOn() {
		return m
	}
	for _, f := range r.opts.Files {
		url, err := r.imageURL(f.Path)
		if err != nil {
			r.e.log.Warn("attachment not sent as an image", "session", r.id, "path", f.Path, "err", err)
			continue
		}
		if url != "" {
			m.Images = append(m.Images, url)
		}
	}
	return m
}

// imageURL is a workspace file as a data URL when it is a PNG, JPEG, GIF
// or WebP (by its content, not its name), scaled to the common limits;
// "" when it is not an image.
func (r *run) imageURL(path string) (string, error) {
	if err := r.env.openWorkspace(); err != nil {
		return "", err
	}
	f, err := r.env.ws.OpenFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512) // what DetectContentType looks at
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	kind := http.DetectContentType(head[:n])
	switch kind {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return "", nil // not an image: only its path goes to the model
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.Size() > maxImageBytes {
		return "", errors.New("too large to send as an image")
	}
	data := make([]byte, fi.Size())
	copy(data, head[:n])
	if _, err := io.ReadFull(f, data[n:]); err != nil {
		return "", err
	}
	data, kind, err = fitImage(data, kind)
	if err != nil {
		return "", err
	}
	return "data:" + kind + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}

// fitImage scales an image down to the common limits; one that fits is
// sent as it is. A scaled JPEG stays JPEG, anything else becomes PNG.
func fitImage(data []byte, kind string) ([]byte, string, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, "", err
	}
	w, h := scaledSize(cfg.Width, cfg.Height)
	if w == cfg.Width && h == cfg.Height {
		return data, kind, nil
	}
	return redrawImage(data, kind, cfg, w, h)
}

// redrawImage decodes an image of cfg's size and encodes it again at
// w×h: a JPEG as JPEG, anything else as PNG (metadata is not kept).
func redrawImage(data []byte, kind string, cfg image.Config, w, h int) ([]byte, string, error) {
	if cfg.Width*cfg.Height > maxImagePixels {
		return nil, "", errors.New("too many pixels to scale")
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", err
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	var buf bytes.Buffer
	if kind == "image/jpeg" {
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85})
	} else {
		kind, err = "image/png", png.Encode(&buf, dst)
	}
	return buf.Bytes(), kind, err
}

// scaledSize fits w×h within maxImageSide, then its short side within
// maxImageShortSide, keeping the aspect ratio.
func scaledSize(w, h int) (int, int) {
	scale := 1.0
	if long := max(w, h); long > maxImageSide {
		scale = float64(maxImageSide) / float64(long)
	}
	if short := float64(min(w, h)) * scale; short > maxImageShortSide {
		scale = float64(maxImageShortSide) / float64(min(w, h))
	}
	if scale >= 1 {
		return w, h
	}
	return max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
}

// imagesRefusedRE matches what text-only endpoints say of image parts:
// OpenAI ("image_url is only supported by certain models"), vLLM ("is not
// a multimodal model"), llama.cpp ("image input is not supported … mmproj"),
// Ollama ("does not support images"; older ones cannot unmarshal an
// array content).
var imagesRefusedRE = regexp.MustCompile(`(?i)image|vision|multimodal|multi-modal|mmproj|cannot unmarshal array`)

// dropRefusedImages: under VisionAuto, when the endpoint refused a
// request carrying images, no image is sent again for the life of the
// process, this run's are taken off, and the thread is told; the caller
// asks again.
func (r *run) dropRefusedImages(err error) bool {
	var ee *openai.EndpointError
	if r.e.cfg.Vision == VisionOn || r.e.cfg.Vision == VisionOff || !errors.As(err, &ee) || !hasImages(r.msgs) {
		return false
	}
	if s := ee.StatusCode(); s != http.StatusBadRequest && s != http.StatusUnprocessableEntity &&
		s != http.StatusUnsupportedMediaType && s != http.StatusInternalServerError {
		return false
	}
	if !imagesRefusedRE.MatchString(ee.Message) {
		return false
	}
	for i := range r.msgs {
		r.msgs[i].Images = nil
	}
	if !r.e.noImages.Swap(true) {
		r.e.log.Warn("the model endpoint refuses image parts; images are no longer sent", "err", err)
	}
	r.emit(Event{Kind: EventImagesRefused, Text: "The model endpoint does not take images, so h9 sends the agent only the paths of shared images " +
		"from now on (H9_MODEL_VISION=auto; set it to false to skip trying)."})
	return true
}

func hasImages(msgs []Message) bool {
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}
