package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/h9-app/h9/workspace/textcut"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResultChars cuts a result like bash output (workspace.MaxOutputChars):
// its head and tail kept.
const maxResultChars = 28_000

// maxResultImages bounds the images of one result that go to the model
// as images; the others are only named.
const maxResultImages = 4

// resultText is what the model reads of a tool's result: its text, other
// content named ([image: image/png, 2.1 KiB]), structured content when
// there is no text, cut to maxResultChars; and the bytes of its first
// images, for a model that sees them.
func resultText(res *mcp.CallToolResult) (string, [][]byte) {
	var b strings.Builder
	var images [][]byte
	for i, c := range res.Content {
		if b.Len() > 4*maxResultChars {
			fmt.Fprintf(&b, "\n[… %d more content parts left out …]", len(res.Content)-i)
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(contentText(c))
		if img, ok := c.(*mcp.ImageContent); ok && len(images) < maxResultImages && len(img.Data) > 0 {
			images = append(images, img.Data)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(data)
		}
	}
	if b.Len() == 0 {
		return "(no output)", nil
	}
	return textcut.HeadTail(b.String(), maxResultChars), images
}

func contentText(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %s]", v.MIMEType, size(len(v.Data)))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %s]", v.MIMEType, size(len(v.Data)))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource: %s]", v.URI)
	case *mcp.EmbeddedResource:
		if r := v.Resource; r != nil {
			if r.Text != "" {
				return r.Text
			}
			return fmt.Sprintf("[resource: %s, %s]", r.URI, size(len(r.Blob)))
		}
	}
	return fmt.Sprintf("[%T content]", c)
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// scrubber replaces header values in anything a server says.
type scrubber struct{ pairs []string } // old, new, old, new…

func newScrubber(servers []Server) scrubber {
	var sc scrubber
	for _, s := range servers {
		for header, v := range s.Headers {
			if len(v) >= 4 {
				sc.pairs = append(sc.pairs, v, "[REDACTED:"+s.HeadersEnv[header]+"]")
			}
		}
	}
	return sc
}

func (sc scrubber) String(s string) string {
	if len(sc.pairs) == 0 {
		return s
	}
	return strings.NewReplacer(sc.pairs...).Replace(s)
}
