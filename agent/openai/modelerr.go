package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EndpointError is the endpoint's refusal of a request: an HTTP error
// status, or an error object sent in a 200 (a provider failing mid-answer).
type EndpointError struct {
	Status  int    // the HTTP status; 0 for an error inside a 200
	Code    string // e.g. "insufficient_quota", "context_length_exceeded"
	Type    string
	Message string      // the endpoint's own words, key removed
	Header  http.Header // Retry-After and friends; nil for in-body errors
}

// StatusCode is the HTTP status, or for an error inside a 200 the status its
// code names (OpenRouter's {"code": 502}), 0 if none.
func (e *EndpointError) StatusCode() int {
	if e.Status != 0 {
		return e.Status
	}
	n, _ := strconv.Atoi(e.Code)
	return n
}

func (e *EndpointError) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	} else {
		b.WriteString("error in the answer")
	}
	if e.Code != "" && e.Code != strconv.Itoa(e.Status) {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// decodeErrorBody reads an error answer in any of the shapes endpoints
// use: OpenAI's {"error":{…}}, Gemini's [{"error":{…}}], vLLM's and
// Mistral's top-level {"object":"error","message":…}, FastAPI's
// {"detail":…}, {"error":"text"}, or a plain-text or HTML page.
func decodeErrorBody(status int, body []byte, h http.Header) *EndpointError {
	e := &EndpointError{Status: status, Header: h}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			body = bytes.TrimSpace(list[0])
		}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		e.Message = plainText(body)
		return e
	}
	switch inner := bytes.TrimSpace(top["error"]); {
	case len(inner) > 0 && inner[0] == '{':
		e.fill(inner)
	case len(inner) > 0 && inner[0] == '"':
		_ = json.Unmarshal(inner, &e.Message)
	case top["detail"] != nil:
		e.Message = textOf(top["detail"])
	default:
		e.fill(body)
	}
	if e.Message == "" {
		e.Message = plainText(body)
	}
	return e
}

// fill reads one error object's fields; message may be a string, a list
// of strings or an object (Mistral's validation details), code a string or
// a number. OpenRouter's metadata.raw carries the upstream provider's words.
func (e *EndpointError) fill(obj json.RawMessage) {
	var f struct {
		Message  json.RawMessage `json:"message"`
		Type     string          `json:"type"`
		Code     json.RawMessage `json:"code"`
		Status   any             `json:"status"`
		Metadata struct {
			Raw any `json:"raw"`
		} `json:"metadata"`
	}
	if json.Unmarshal(obj, &f) != nil {
		return
	}
	e.Message, e.Type, e.Code = textOf(f.Message), f.Type, strings.Trim(textOf(f.Code), `"`)
	if s, ok := f.Status.(string); ok && e.Type == "" {
		e.Type = s // Gemini's "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"
	}
	if raw, ok := f.Metadata.Raw.(string); ok && raw != "" && !strings.Contains(e.Message, raw) {
		e.Message += ": " + raw
	}
}

// textOf renders a JSON value as text: strings unquoted, lists joined,
// anything else as compact JSON.
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ", ")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// plainText makes a non-JSON body (a proxy's HTML page) one short line.
func plainText(body []byte) string {
	s := string(body)
	if i := strings.Index(strings.ToLower(s), "<title>"); i >= 0 {
		s = s[i+len("<title>"):]
		if j := strings.Index(strings.ToLower(s), "</title>"); j >= 0 {
			s = s[:j]
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// idleError: the endpoint sent nothing for the idle timeout, or (whole)
// its answer was still coming after Config.MaxRequest.
type idleError struct {
	after time.Duration
	whole bool
}

func (e *idleError) Error() string {
	if e.whole {
		return fmt.Sprintf("the endpoint's answer was not complete after %s", e.after)
	}
	return fmt.Sprintf("no data from the endpoint for %s", e.after)
}

// droppedError: the connection closed before the answer was complete.
type droppedError struct{ err error }

func (e *droppedError) Error() string { return "connection dropped: " + e.err.Error() }
func (e *droppedError) Unwrap() error { return e.err }

// dropped reports whether err is a connection that closed under the
// request: EOF before or inside the body, a reset, a broken pipe.
func dropped(err error) bool {
	var de *droppedError
	if errors.As(err, &de) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && (oe.Op == "read" || oe.Op == "write")
}

// unreachable reports whether the endpoint could not be connected to.
func unreachable(err error) bool {
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &de) || (errors.As(err, &oe) && oe.Op == "dial")
}
