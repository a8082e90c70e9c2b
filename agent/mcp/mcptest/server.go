// Package mcptest is a real MCP server built with the official SDK, for
// h9's tests: a remote one over loopback HTTP that requires a header
// token, and the tools of the stdio binary in ../testdata/stdioserver.
package mcptest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer is an MCP server with the test tools:
//   - echo (read-only): returns its "text" argument;
//   - note: a tool that would change something (not annotated read-only);
//   - read_file: named like a built-in tool;
//   - huge: a result of about a mebibyte;
//   - hang: never answers until the call is cancelled;
//   - picture: an image (Picture); icon: a small one;
//   - env: the server's environment (for the stdio server);
//   - instance: an id of this server, made when it was: two calls that
//     get the same reached the same process;
//   - leak: echoes the request's Authorization header, as a careless
//     server might;
//   - add_tool: adds a tool named by "name" (notifications/tools/list_changed);
//   - bad_type, ext_ref: schemas a model API would refuse.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "h9-test", Version: "1"}, nil)
	instance := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	add := func(name string, readOnly bool, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: "test tool " + name, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly}}, h)
	}
	add("echo", true, obj, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		json.Unmarshal(req.Params.Arguments, &in)
		return text("echo: " + in.Text), nil
	})
	add("note", false, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("noted"), nil
	})
	add("read_file", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("the server's read_file"), nil
	})
	add("huge", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("HEAD" + strings.Repeat("x", 1<<20) + "TAIL"), nil
	})
	add("hang", true, obj, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	add("fail", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the tracker is read-only today"}}}, nil
	})
	add("picture", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a chart"}, &mcp.ImageContent{Data: Picture(), MIMEType: "image/png"}}}, nil
	})
	add("icon", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: icon(), MIMEType: "image/png"}}}, nil
	})
	add("env", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wd, _ := os.Getwd()
		return text("cwd=" + wd + "\n" + strings.Join(os.Environ(), "\n")), nil
	})
	add("instance", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("instance " + instance), nil
	})
	add("leak", true, obj, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Extra != nil && req.Extra.Header != nil {
			return text("you sent " + req.Extra.Header.Get("Authorization")), nil
		}
		return text("no header"), nil
	})
	add("add_tool", false, obj, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		json.Unmarshal(req.Params.Arguments, &in)
		AddTool(s, in.Text)
		return text("added " + in.Text), nil
	})
	add("bad_type", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("never offered"), nil
	})
	add("ext_ref", true, json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/schema.json"}}}`),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("never offered"), nil
		})
	add("huge_schema", true, obj, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("never offered"), nil
	})
	s.AddReceivingMiddleware(hostileSchemas)
	return s
}

// hostileSchemas rewrites the listed schemas of bad_type and huge_schema
// into what the SDK would never let a server register but a server of any
// other make may send: a schema of type string, and one of 40 KB.
func hostileSchemas(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			for i, t := range list.Tools {
				c := *t
				switch t.Name {
				case "bad_type":
					c.InputSchema = json.RawMessage(`{"type":"string"}`)
				case "huge_schema":
					c.InputSchema = map[string]any{"type": "object", "description": strings.Repeat("y", 40<<10)}
				}
				list.Tools[i] = &c
			}
		}
		return res, err
	}
}

// AddTool adds a read-only tool that answers its own name: connected
// clients get notifications/tools/list_changed.
func AddTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, Description: "added later", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("I am " + name), nil
		})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Remote is the server over loopback Streamable HTTP, refusing any request
// without the header "Authorization: Bearer <token>".
type Remote struct {
	*httptest.Server
	MCP      *mcp.Server
	Down     atomic.Bool  // answer 503 to everything
	Requests atomic.Int64 // requests that carried the token
}

// NewRemote starts it; Close stops it.
func NewRemote(token string) *Remote {
	r := &Remote{MCP: NewServer()}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return r.MCP }, nil)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case r.Down.Load():
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		case req.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, "missing or wrong token", http.StatusUnauthorized)
		default:
			r.Requests.Add(1)
			h.ServeHTTP(w, req)
		}
	}))
	return r
}

// PictureMetadata is in a text chunk of Picture: what a server can hide in
// an image besides its pixels.
const PictureMetadata = "h9-test-png-metadata"

// Picture is a PNG of 3000×1200 pixels, larger than a model takes, with
// PictureMetadata in a tEXt chunk.
var Picture = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 3000, 1200))
	for x := 0; x < 3000; x += 7 {
		img.Set(x, x%1200, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	data := buf.Bytes()
	iend := len(data) - 12 // the IEND chunk: length, type, CRC
	chunk := []byte("tEXt" + "Comment\x00" + PictureMetadata)
	var out bytes.Buffer
	out.Write(data[:iend])
	binary.Write(&out, binary.BigEndian, uint32(len(chunk)-4))
	out.Write(chunk)
	binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	out.Write(data[iend:])
	return out.Bytes()
})

var icon = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 32, 16)))
	return buf.Bytes()
})
