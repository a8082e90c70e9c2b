package openai

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"unicode"
)

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
