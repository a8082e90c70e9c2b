package automation

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Webhooks (ARCHITECTURE.md, "Automations"): POST /hooks/<name> with
// X-H9-Timestamp (Unix seconds) and X-H9-Signature: sha256=<hex HMAC-SHA256
// of timestamp + "." + body>, a JSON body of at most 1 MiB.
const (
	HooksPath       = "/hooks/"
	HeaderSignature = "X-H9-Signature"
	HeaderTimestamp = "X-H9-Timestamp"
	// MaxWebhookBody is the largest body taken, in bytes.
	MaxWebhookBody = 1 << 20
	// ReplayWindow is how far a timestamp may be from h9's clock, either way.
	ReplayWindow = 5 * time.Minute
)

// Sign is the X-H9-Signature value a sender puts on body sent at ts.
func Sign(secret []byte, ts string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// errSignature is every way a signature can be wrong: the answer does not
// tell a forger which.
var errSignature = errors.New("bad or expired signature")

// verify checks a delivery's signature and timestamp against now.
func (a *Automation) verify(ts, sig string, body []byte, now time.Time) error {
	if len(a.secret) == 0 {
		return errSignature
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return errSignature
	}
	at := time.Unix(sec, 0)
	if at.Before(now.Add(-ReplayWindow)) || at.After(now.Add(ReplayWindow)) {
		return errSignature
	}
	want := Sign(a.secret, strings.TrimSpace(ts), body)
	// hmac.Equal compares in constant time (and lengths first, which
	// tells nothing: every valid signature has the same length).
	if !hmac.Equal([]byte(strings.TrimSpace(sig)), []byte(want)) {
		return errSignature
	}
	return nil
}

// Delivery is a verified webhook delivery.
type Delivery struct {
	Body      []byte
	Payload   any    // the body decoded (numbers as written)
	Timestamp string // X-H9-Timestamp as sent
}

// Key is the delivery's occurrence key: the dedupe template's value, or
// the body's hash (ARCHITECTURE.md, "Automations": "the same signed body,
// again" is a duplicate, however it was re-signed; the signature covers
// the timestamp, and the 5-minute window still bounds a replay).
func (a *Automation) deliveryKey(d Delivery) (key, dedupe string, err error) {
	if a.dedupeTmpl != nil {
		v, err := render(a.dedupeTmpl, d.Payload)
		if err != nil {
			return "", "", err
		}
		if v = strings.TrimSpace(v); v != "" {
			return "webhook:" + boundKey(v), boundKey(v), nil
		}
	}
	sum := sha256.Sum256(d.Body)
	return "webhook:" + hex.EncodeToString(sum[:]), "", nil
}

// Outcome is what became of an occurrence, as the engine answers a
// trigger.
type Outcome struct {
	// Result is one of the metric's outcomes: started, deduplicated,
	// skipped, failed (or queued: recorded, waiting for the open session).
	Result string
	// Link is the session's thread (started, deduplicated), "" when none.
	Link string
	// Why says why it was skipped or failed.
	Why string
}

// Outcomes, as h9_automation_fires_total's outcome label says them.
const (
	ResultStarted      = "started"
	ResultDeduplicated = "deduplicated"
	ResultSkipped      = "skipped"
	ResultFailed       = "failed"
	ResultQueued       = "queued"
)

// WebhookFirer is what the webhook handler needs of the engine.
type WebhookFirer interface {
	// WebhookAutomation is the webhook automation named name, nil if none.
	WebhookAutomation(name string) *Automation
	// FireWebhook records the delivery and starts (or dedupes) its
	// session; it returns once the occurrence is recorded. err is only for
	// what kept it from being recorded.
	FireWebhook(ctx context.Context, a *Automation, d Delivery) (Outcome, error)
}

// HookHandler serves POST /hooks/<name>. Every answer is a short JSON
// object; none carries a stack trace or the secret.
type HookHandler struct {
	Firer WebhookFirer
	Log   *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Timeout bounds the recording and the start (default 20s).
	Timeout time.Duration
}

func (h *HookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, map[string]string{"error": "webhooks are POST"})
		return
	}
	name := strings.TrimPrefix(r.URL.Path, HooksPath)
	a := h.Firer.WebhookAutomation(name)
	if name == "" || a == nil {
		answer(w, http.StatusNotFound, map[string]string{"error": "no webhook automation of that name"})
		return
	}
	if r.ContentLength > MaxWebhookBody {
		answer(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "the body is over 1 MiB"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "the body is over 1 MiB"})
			return
		}
		answer(w, http.StatusBadRequest, map[string]string{"error": "the body could not be read"})
		return
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	ts := r.Header.Get(HeaderTimestamp)
	if err := a.verify(ts, r.Header.Get(HeaderSignature), body, now()); err != nil {
		answer(w, http.StatusUnauthorized, map[string]string{"error": err.Error()})
		return
	}
	payload, err := decodePayload(body)
	if err != nil {
		answer(w, http.StatusBadRequest, map[string]string{"error": "the body is not one JSON value"})
		return
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	out, err := h.Firer.FireWebhook(ctx, a, Delivery{Body: body, Payload: payload, Timestamp: strings.TrimSpace(ts)})
	if err != nil {
		if h.Log != nil {
			h.Log.Warn("a webhook could not be recorded", "automation", a.Name, "err", err)
		}
		answer(w, http.StatusServiceUnavailable, map[string]string{"error": "h9 could not record it; send it again"})
		return
	}
	status := http.StatusAccepted
	if out.Result == ResultDeduplicated {
		status = http.StatusOK
	}
	resp := map[string]string{"outcome": out.Result}
	if out.Link != "" {
		resp["thread"] = out.Link
	}
	if out.Why != "" {
		resp["why"] = out.Why
	}
	answer(w, status, resp)
}

func answer(w http.ResponseWriter, status int, v map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// boundKey keeps a key within what the store takes: a longer one is
// hashed.
func boundKey(k string) string {
	if len(k) <= 200 {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WebhookRequest is a delivery's session request: the task with the
// payload's values quoted into it, then the payload itself fenced as data.
func (a *Automation) WebhookRequest(d Delivery) (string, error) {
	task := a.Task
	if a.task != nil {
		var err error
		if task, err = render(a.task, d.Payload); err != nil {
			return "", err
		}
	}
	data := string(d.Body)
	var pretty bytes.Buffer
	if json.Indent(&pretty, d.Body, "", "  ") == nil {
		data = pretty.String()
	}
	return Request(task, DataWebhook, data), nil
}
