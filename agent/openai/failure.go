package openai

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

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
