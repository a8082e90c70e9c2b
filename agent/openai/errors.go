package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
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

// failure is what went wrong with a model request, as far as deciding
// whether to try again and what to tell the user goes.
type failure int

const (
	failOther       failure = iota // an answer h9 could not understand
	failRateLimit                  // 429: retried, honouring Retry-After
	failQuota                      // out of quota or credit: reported at once
	failAuth                       // 401, 403
	failNotFound                   // 404: wrong model or path
	failOverflow                   // the prompt is over the context window: compact and retry
	failSetup                      // the server is not set up for tool calls (names the fix)
	failServer                     // 5xx, 408, an error inside a 200: retried
	failRejected                   // any other 4xx
	failIdle                       // nothing arrived for the idle timeout: retried
	failDropped                    // the connection closed under the request: retried
	failUnreachable                // no connection: retried
	failEmpty                      // an answer with nothing in it: retried once
)

// classify names the failure behind err.
func classify(err error) failure {
	var ee *EndpointError
	var ie *idleError
	var ea *emptyAnswerError
	switch {
	case errors.As(err, &ea):
		return failEmpty
	case errors.As(err, &ee):
		return classifyEndpoint(ee)
	case errors.As(err, &ie):
		return failIdle
	case dropped(err):
		return failDropped
	case unreachable(err):
		return failUnreachable
	}
	return failOther
}

// quotaCodes are the codes endpoints give an exhausted account or budget.
var quotaCodes = []string{"insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
	"insufficient_balance", "insufficient_credits", "quota_exceeded"}

func classifyEndpoint(e *EndpointError) failure {
	code, low, status := strings.ToLower(e.Code+" "+e.Type), strings.ToLower(e.Message), e.StatusCode()
	switch {
	case status == http.StatusPaymentRequired || containsAny(code, quotaCodes...):
		return failQuota
	case setupFix(low) != "":
		return failSetup
	case (status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == 0) && overflowed(code, low):
		return failOverflow
	case status == http.StatusTooManyRequests:
		return failRateLimit
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failAuth
	case status == http.StatusNotFound:
		return failNotFound
	case status == 0 || status == http.StatusRequestTimeout || status >= 500:
		return failServer
	}
	return failRejected
}

// retryable: worth another try of the same request.
func (f failure) retryable() bool {
	switch f {
	case failRateLimit, failServer, failIdle, failDropped, failUnreachable, failEmpty:
		return true
	}
	return false
}

// setupFixes map what a server without a tool-call parser says to the fix.
var setupFixes = []struct{ says, fix string }{
	{"--jinja", "start llama-server with --jinja (and a chat template that supports tools)"},
	{"enable-auto-tool-choice", "start vLLM with --enable-auto-tool-choice and the --tool-call-parser for this model"},
	{"tool-call-parser", "start vLLM with --enable-auto-tool-choice and the --tool-call-parser for this model"},
	{"does not support tools", "set H9_MODEL to a model that supports tool calls (for Ollama, one tagged \"tools\")"},
	{"tools are not supported", "set H9_MODEL to a model that supports tool calls"},
	{"tool use is not supported", "set H9_MODEL to a model that supports tool calls"},
	{"function calling is not enabled", "set H9_MODEL to a model that supports tool calls"},
}

// setupFix is the fix for a set-up error's message, "" if it is none.
func setupFix(lowMsg string) string {
	for _, s := range setupFixes {
		if strings.Contains(lowMsg, s.says) {
			return s.fix
		}
	}
	return ""
}

// overflowSigns are how endpoints say the prompt does not fit: OpenAI,
// Groq and DeepSeek (context_length_exceeded, "maximum context length"),
// llama.cpp (exceed_context_size_error), vLLM, Mistral, Gemini, Anthropic
// through LiteLLM.
var overflowSigns = []string{"context_length_exceeded", "exceed_context_size", "context window",
	"maximum context", "context length", "context size", "prompt is too long", "input token count",
	"reduce the length of the messages", "too many tokens"}

func overflowed(code, lowMsg string) bool {
	return containsAny(code, overflowSigns...) || containsAny(lowMsg, overflowSigns...)
}

// statedWindowRe finds the window an overflow message states: "maximum
// context length is 8192 tokens", "available context size (4096 tokens)",
// "32768 maximum context length", "tokens allowed (1048576)".
var statedWindowRe = regexp.MustCompile(`(?i)(?:maximum context length|context (?:size|length|window)|tokens allowed)\D{0,24}?(\d[\d,]*)|(\d[\d,]*)\s*(?:tokens\s*)?maximum context`)

// statedWindow is the context window an overflow error names, 0 if none.
func statedWindow(msg string) int {
	m := statedWindowRe.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(strings.ReplaceAll(m[1]+m[2], ",", ""))
	if err != nil {
		return 0
	}
	return n
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// IsSetupError reports whether err is a server that is not set up for tool
// calls (llama.cpp without --jinja, vLLM without --enable-auto-tool-choice,
// a model without tool support); DescribeError names the fix.
func IsSetupError(err error) bool { return classify(err) == failSetup }

// Overflowed reports whether err says the prompt is over the model's
// context window, and the window the endpoint stated there (0 if none).
func Overflowed(err error) (window int, ok bool) {
	var ee *EndpointError
	if classify(err) != failOverflow || !errors.As(err, &ee) {
		return 0, false
	}
	return statedWindow(ee.Message), true
}

// endpointTextLimit caps the endpoint's own words in a failure message.
const endpointTextLimit = 400

// DescribeError is what a user reads about a failed model request:
// the real cause (quota, rate limit, set-up, unreachable, …), the
// endpoint's own words and the fix when h9 knows it. It never holds the
// key: the model removes it from everything an endpoint says.
func DescribeError(err error) string {
	tries := 1
	var me *modelError
	if errors.As(err, &me) {
		tries, err = me.tries, me.err
	}
	var ee *EndpointError
	errors.As(err, &ee)
	switch f := classify(err); f {
	case failQuota, failRateLimit, failAuth, failNotFound, failSetup, failRejected, failServer, failOverflow:
		return endpointFailureText(f, ee, tries)
	case failIdle:
		var ie *idleError
		errors.As(err, &ie)
		if ie.whole {
			return fmt.Sprintf("The model endpoint's answer was still not complete after %s, %s in a row.", ie.after, triesText(tries))
		}
		return fmt.Sprintf("The model endpoint sent nothing for %s (H9_MODEL_TIMEOUT), %s in a row.", ie.after, triesText(tries))
	case failDropped:
		return fmt.Sprintf("The connection to the model endpoint closed before the answer was complete, %s in a row.", triesText(tries))
	case failUnreachable:
		return fmt.Sprintf("The model endpoint could not be reached (%s): %s. Check OPENAI_BASE_URL and the network.", triesText(tries), netCause(err))
	case failEmpty:
		var ea *emptyAnswerError
		errors.As(err, &ea)
		return fmt.Sprintf("The model returned an empty answer %s in a row%s. Nothing was stored; reply to try again.", timesText(tries), ea.reason())
	}
	return "The model endpoint sent an answer h9 could not understand: " + clean(rootCause(err)) + "."
}

func endpointFailureText(f failure, e *EndpointError, tries int) string {
	status := statusText(e)
	said := ""
	if words := clean(e.Message); words != "" {
		said = ": " + words
	}
	switch f {
	case failQuota:
		return fmt.Sprintf("The model endpoint says this account is out of quota or credit (%s)%s. Add credit or raise the limit for OPENAI_API_KEY's account, then try again.", status, said)
	case failRateLimit:
		return fmt.Sprintf("The model endpoint is rate limiting h9 (%s) and still was after %s%s. Try again in a few minutes.", status, triesText(tries), said)
	case failAuth:
		return fmt.Sprintf("The model endpoint refused h9's credentials (%s)%s. Check OPENAI_API_KEY.", status, said)
	case failNotFound:
		return fmt.Sprintf("The model endpoint does not know this model or path (%s)%s. Check H9_MODEL and OPENAI_BASE_URL.", status, said)
	case failSetup:
		return fmt.Sprintf("The model endpoint is not set up for tool calls (%s)%s. Fix: %s.", status, said, setupFix(strings.ToLower(e.Message)))
	case failOverflow:
		hint := "Set H9_CONTEXT_WINDOW to the model's context window."
		if n := statedWindow(e.Message); n > 0 {
			hint = fmt.Sprintf("Set H9_CONTEXT_WINDOW to the model's context window (it says %d tokens).", n)
		}
		return fmt.Sprintf("The conversation does not fit the model's context window, even after summarising it (%s)%s. %s", status, said, hint)
	case failServer:
		return fmt.Sprintf("The model endpoint is failing (%s) and still was after %s%s. Try again later.", status, triesText(tries), said)
	}
	return fmt.Sprintf("The model endpoint rejected the request (%s)%s", status, said)
}

// statusText is "HTTP 429, insufficient_quota" or, for an error inside a
// 200, "an error inside its answer".
func statusText(e *EndpointError) string {
	s := "an error inside its answer"
	if e.Status != 0 {
		s = fmt.Sprintf("HTTP %d", e.Status)
	}
	if c := e.Code; c != "" && c != fmt.Sprint(e.Status) {
		s += ", " + clean(c)
	}
	return s
}

func triesText(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

func timesText(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// netCause is the innermost network error's words ("connection refused").
func netCause(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return clean(oe.Err.Error())
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return clean(de.Error())
	}
	return clean(rootCause(err))
}

// rootCause is the innermost error's text; a scrubbed error's own text
// is as deep as it goes, since what it wraps may hold the key.
func rootCause(err error) string {
	for {
		if se, ok := err.(*scrubbedError); ok {
			return se.msg
		}
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// clean makes an endpoint's text fit a one-line message: no control
// characters or runs of spaces, at most endpointTextLimit runes. Slack
// escaping is the bot's job.
func clean(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	s = strings.TrimRight(s, ".")
	if r := []rune(s); len(r) > endpointTextLimit {
		s = string(r[:endpointTextLimit-1]) + "…"
	}
	return s
}
