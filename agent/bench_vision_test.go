package agent

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// screenshotPNG is a w×h PNG with a screenshot's mix: flat areas and
// noisy text-like rows, so it compresses like one (hundreds of KiB).
func screenshotPNG(tb testing.TB, w, h int, seed uint64) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, 1))
	for y := range h {
		for x := range w {
			c := color.RGBA{240, 240, 240, 255}
			if (y/12)%3 == 0 && r.IntN(3) == 0 {
				c = color.RGBA{uint8(r.IntN(80)), uint8(r.IntN(80)), uint8(r.IntN(80)), 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkHistoryAfterScreenshots (issue 22): a session's stored history
// after ten replies each sharing a 1920×1080 screenshot, side by side with
// the same ten replies naming the same paths without images. Budget: the
// screenshots add under 64 KiB. The images do reach the model (checked).
func BenchmarkHistoryAfterScreenshots(b *testing.B) {
	for _, withImages := range []bool{false, true} {
		name := map[bool]string{false: "10 replies, no images", true: "10 replies, 10 screenshots"}[withImages]
		b.Run(name, func(b *testing.B) {
			var stored, sentImages, shotBytes int
			for i := range b.N {
				h := newHarness(b)
				id := fmt.Sprintf("s%d", i)
				dir := h.wsDir(id)
				for n := range 10 {
					f := Attachment{Path: fmt.Sprintf("%s/1.%d-shot.png", AttachmentsDir, n), Name: "shot.png"}
					data := screenshotPNG(b, 1920, 1080, uint64(n))
					shotBytes += len(data)
					if err := os.MkdirAll(filepath.Join(dir, AttachmentsDir), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, f.Path), data, 0o644); err != nil {
						b.Fatal(err)
					}
					opts := RunOptions{}
					if withImages {
						opts.Files = []Attachment{f}
					}
					h.srv.Enqueue(fakemodel.Text("seen"))
					req := Request{Intent: IntentReply, Text: "what is wrong here? " + f.Path}
					if _, err := h.eng.Run(context.Background(), id, req, opts); err != nil {
						b.Fatal(err)
					}
					sentImages += bytes.Count(h.srv.Bodies()[n], []byte(`"type":"image_url"`))
				}
				sess, err := h.store.LoadSession(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range sess.Messages {
					stored += len(m)
				}
			}
			if withImages && sentImages < 10*b.N {
				b.Fatalf("%d image parts reached the model, want at least %d", sentImages, 10*b.N)
			}
			b.ReportMetric(float64(stored)/float64(b.N)/1024, "history-KiB")
			b.ReportMetric(float64(shotBytes)/float64(b.N)/1024, "screenshots-KiB")
		})
	}
}
