package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

const (
	defaultRetryBase = 500 * time.Millisecond
	maxBackoff       = 30 * time.Second
	// maxRetryAfter bounds how long a server may make a run wait per try.
	maxRetryAfter = 2 * time.Minute
)

// retryModel retries transient failures (429, 5xx, timeouts, connection
// errors, empty replies) with exponential backoff and full jitter, never
// sooner than the server's Retry-After. Each try has its own timeout.
type retryModel struct {
	model   Model
	tries   int
	timeout time.Duration
	base    time.Duration
}

// modelError is the final failure, with the words a user sees.
type modelError struct {
	tries int
	err   error
}

func (e *modelError) Error() string   { return fmt.Sprintf("after %d tries: %v", e.tries, e.err) }
func (e *modelError) Unwrap() []error { return []error{ErrModel, e.err} }

func (m retryModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	for try := 1; ; try++ {
		resp, err := m.once(ctx, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		if !retryable(err) || try >= m.tries {
			return resp, &modelError{tries: try, err: err}
		}
		if err := sleep(ctx, m.delay(try, resp.Header())); err != nil {
			return resp, err
		}
	}
}

// once is one try under the per-request timeout.
func (m retryModel) once(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	tctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	resp, err := m.model.CreateChatCompletion(tctx, req)
	if err == nil && len(resp.Choices) == 0 {
		err = ErrEmptyReply
	}
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		err = &timeoutError{after: m.timeout, err: err}
	}
	return resp, err
}

type timeoutError struct {
	after time.Duration
	err   error
}

func (e *timeoutError) Error() string { return fmt.Sprintf("no answer within %s: %v", e.after, e.err) }
func (e *timeoutError) Unwrap() error { return e.err }

// delay is the wait before try+1: backoff with full jitter, at least Retry-After.
func (m retryModel) delay(try int, h http.Header) time.Duration {
	backoff := min(m.base<<(try-1), maxBackoff)
	d := time.Duration(rand.Int64N(int64(backoff) + 1))
	if ra, ok := retryAfter(h); ok {
		d = max(d, min(ra, maxRetryAfter))
	}
	return d
}

// retryAfter reads OpenAI's retry-after-ms, then the standard Retry-After
// (seconds or an HTTP date). go-openai keeps the response headers on the
// response value it returns even when the status is an error.
func retryAfter(h http.Header) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// retryable: rate limits, server errors, timeouts, dropped connections and
// empty replies are worth another try; 4xx and undecodable bodies are not.
func retryable(err error) bool {
	if code := HTTPStatus(err); code != 0 {
		return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
	}
	var te *timeoutError
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &te) || errors.Is(err, ErrEmptyReply) || errors.As(err, &oe) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// HTTPStatus is the HTTP status carried by a go-openai error, 0 if none.
func HTTPStatus(err error) int {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// modelFailureText turns a model failure into words for the Slack thread; it
// never includes the key or the request.
func modelFailureText(err error) string {
	var me *modelError
	tries := 1
	if errors.As(err, &me) {
		tries = me.tries
	}
	var te *timeoutError
	switch code := HTTPStatus(err); {
	case code == http.StatusTooManyRequests:
		return fmt.Sprintf("The model endpoint is rate limiting us (HTTP 429) and still was after %d tries. Try again in a few minutes.", tries)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Sprintf("The model endpoint refused our credentials (HTTP %d). Check OPENAI_API_KEY.", code)
	case code == http.StatusNotFound:
		return "The model endpoint does not know this model or path (HTTP 404). Check H9_MODEL and OPENAI_BASE_URL."
	case code >= 500:
		return fmt.Sprintf("The model endpoint is failing (HTTP %d) and still was after %d tries. Try again later.", code, tries)
	case code >= 400:
		return fmt.Sprintf("The model endpoint rejected the request (HTTP %d): %s", code, short(openaiMessage(err)))
	case errors.As(err, &te):
		return fmt.Sprintf("The model did not answer within %s, %d tries in a row.", te.after, tries)
	case errors.Is(err, ErrEmptyReply):
		return fmt.Sprintf("The model endpoint returned an empty answer %d times in a row.", tries)
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return fmt.Sprintf("The model endpoint could not be reached (%d tries). Check OPENAI_BASE_URL and the network.", tries)
	}
	return "The model endpoint sent an answer h9 could not understand."
}

func openaiMessage(err error) string {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
