package fakeslack

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Call is one request the app made to the Web API or a response_url ("response_url").
type Call struct {
	Method string
	Token  string
	// Params holds form fields, query parameters and top-level JSON scalars; JSON arrays and
	// objects (e.g. blocks) appear as their compact JSON text, as a form would carry them.
	Params     map[string]string
	Body       []byte
	At         time.Time
	Status     int    // HTTP status answered
	SlackError string // "error" of an ok:false answer
	// Replica is the tag of the API URL the call came through (APIURLFor); "" for APIURL.
	Replica string
}

// apiRequest is a parsed Web API request.
type apiRequest struct {
	replica string // the tag of APIURLFor, "" for APIURL
	method  string
	token   string
	params  map[string]string
	raw     map[string]json.RawMessage // top-level JSON body fields, when the body is JSON
	body    []byte
}

func (r *apiRequest) get(k string) string { return r.params[k] }

func (r *apiRequest) has(k string) bool { _, ok := r.params[k]; return ok }

// blocks returns the blocks JSON whether sent as a form string, a JSON string or a JSON array.
func (r *apiRequest) blocks() json.RawMessage {
	if raw, ok := r.raw["blocks"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return json.RawMessage(s)
		}
		return raw
	}
	if v, ok := r.params["blocks"]; ok {
		return json.RawMessage(v)
	}
	return nil
}

func (r *apiRequest) content() content {
	att := r.get("attachments")
	return content{
		text:           r.get("text"),
		hasText:        r.has("text"),
		blocks:         r.blocks(),
		hasAttachments: att != "" && att != "null" && att != "[]",
	}
}

// reply is a JSON answer; status 0 means 200.
type reply struct {
	status     int
	retryAfter int
	body       map[string]any
}

func ok(fields map[string]any) reply {
	body := map[string]any{"ok": true}
	maps.Copy(body, fields)
	return reply{body: body}
}

func fail(code string) reply { return reply{body: map[string]any{"ok": false, "error": code}} }

type apiHandler func(s *Server, r *apiRequest) reply

var apiMethods = map[string]apiHandler{
	"auth.test":             (*Server).authTest,
	"apps.connections.open": (*Server).connectionsOpen,
	"chat.postMessage":      (*Server).chatPostMessage,
	"chat.update":           (*Server).chatUpdate,
	"chat.postEphemeral":    (*Server).chatPostEphemeral,
	"chat.delete":           (*Server).chatDelete,
	"chat.getPermalink":     (*Server).chatGetPermalink,
	"reactions.add":         (*Server).reactionsAdd,
	"reactions.remove":      (*Server).reactionsRemove,
	"conversations.info":    (*Server).conversationsInfo,
	"conversations.replies": (*Server).conversationsReplies,
	"conversations.history": (*Server).conversationsHistory,
	"users.info":            (*Server).usersInfo,
	"views.publish":         (*Server).viewsPublish,

	"files.getUploadURLExternal":   (*Server).filesGetUploadURLExternal,
	"files.completeUploadExternal": (*Server).filesCompleteUploadExternal,
	"files.info":                   (*Server).filesInfo,

	"agents.sessions.setStatus": (*Server).agentsSetStatus,
	"agents.sessions.rename":    (*Server).agentsRename,
	"chat.startStream":          (*Server).chatStartStream,
	"chat.appendStream":         (*Server).chatAppendStream,
	"chat.stopStream":           (*Server).chatStopStream,
}

func (s *Server) serveAPI(w http.ResponseWriter, hr *http.Request) {
	_, method, _ := strings.Cut(hr.URL.Path, "/api/")
	if !s.hangs.hold(hr.Context(), s.ctx.Done(), method) {
		return // the caller gave up on a hung call
	}
	r, err := parseAPIRequest(method, hr)
	r.replica = hr.PathValue("replica")
	if err != nil {
		s.finish(w, reply{status: http.StatusBadRequest, body: map[string]any{"ok": false, "error": "invalid_form_data"}})
		return
	}
	s.mu.Lock()
	rep := s.handleLocked(r, func() reply {
		h, known := apiMethods[method]
		if !known {
			return fail("unknown_method")
		}
		if code := s.authErrorLocked(method, r.token); code != "" {
			return fail(code)
		}
		return h(s, r)
	})
	s.mu.Unlock()
	if !s.hangsAfter.hold(hr.Context(), s.ctx.Done(), method) {
		return // done, but the caller never hears (HangAfter)
	}
	s.finish(w, rep)
}

// handleLocked applies scheduled faults, then runs h, and records the call.
func (s *Server) handleLocked(r *apiRequest, h func() reply) reply {
	var rep reply
	if secs, limited := s.faults.takeRateLimitLocked(r.method); limited {
		rep = reply{status: http.StatusTooManyRequests, retryAfter: secs, body: map[string]any{"ok": false, "error": "ratelimited"}}
	} else if code, failing := s.faults.takeFailureLocked(r.method); failing {
		rep = fail(code)
	} else if code, refused := s.faults.refusals[r.method]; refused {
		rep = refusal(r.method, code)
	} else {
		rep = h()
	}
	c := Call{Method: r.method, Token: r.token, Params: r.params, Body: r.body, At: time.Now(), Status: rep.status, Replica: r.replica}
	if c.Status == 0 {
		c.Status = http.StatusOK
	}
	if okv, _ := rep.body["ok"].(bool); !okv {
		c.SlackError, _ = rep.body["error"].(string)
	}
	s.calls = append(s.calls, c)
	s.received = append(s.received, r.method+" "+paramsText(r.params))
	s.logf("%s → %d %s", r.method, c.Status, c.SlackError)
	return rep
}

func (s *Server) finish(w http.ResponseWriter, rep reply) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if rep.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(rep.retryAfter))
	}
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	_ = json.NewEncoder(w).Encode(rep.body)
}

// authErrorLocked answers like Slack for a missing, wrong or wrong-type token.
func (s *Server) authErrorLocked(method, token string) string {
	wantApp := method == "apps.connections.open"
	switch {
	case token == "":
		return "not_authed"
	case wantApp && token == s.opts.AppToken, !wantApp && token == s.opts.BotToken:
		return ""
	case token == s.opts.AppToken || token == s.opts.BotToken:
		return "not_allowed_token_type"
	default:
		return "invalid_auth"
	}
}

func parseAPIRequest(method string, hr *http.Request) (*apiRequest, error) {
	r := &apiRequest{method: method, params: map[string]string{}}
	body, err := io.ReadAll(io.LimitReader(hr.Body, 16<<20))
	r.body = body
	if err != nil {
		return r, err
	}
	for k, v := range hr.URL.Query() {
		r.params[k] = v[0]
	}
	ctype, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type"))
	switch {
	case ctype == "application/json" && len(body) > 0:
		if err := json.Unmarshal(body, &r.raw); err != nil {
			return r, err
		}
		for k, v := range r.raw {
			r.params[k] = scalarString(v)
		}
	case len(body) > 0:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return r, err
		}
		for k, v := range form {
			r.params[k] = v[0]
		}
	}
	r.token = r.params["token"]
	if auth := hr.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		r.token = strings.TrimPrefix(auth, "Bearer ")
	}
	return r, nil
}

// scalarString renders a JSON value as a form field would carry it.
func scalarString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}

// Calls returns copies of the recorded calls of method ("" = all) in order.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			c.Params = maps.Clone(c.Params)
			c.Body = append([]byte(nil), c.Body...)
			out = append(out, c)
		}
	}
	return out
}

// paramsText renders parameters in key order without the token, for Received.
func paramsText(params map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k != "token" {
			b.WriteString(k + "=" + params[k] + "\n")
		}
	}
	return b.String()
}

// Received returns everything the app sent to Slack except its credentials, for scanning (e.g. for
// leaked secrets): one entry per Web API or response_url call ("method k=v\n…", token removed) and
// one per non-empty ack payload ("ack <envelope_id> <payload>").
func (s *Server) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Violations returns every Slack-limit violation seen in payloads the app sent, in order.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// checkLocked validates a message payload, records violations and returns Slack's answer on failure.
func (s *Server) checkLocked(where string, c content) (reply, bool) {
	code, problems := c.check()
	if code == "" {
		return reply{}, true
	}
	return s.refuseLocked(where, code, problems), false
}

// refuseLocked records problems as violations and returns Slack's answer
// refusing the payload with code, listing each problem as Slack does.
func (s *Server) refuseLocked(where, code string, problems []string) reply {
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		s.violations = append(s.violations, where+": "+p)
		msgs = append(msgs, "[ERROR] "+p)
	}
	rep := fail(code)
	rep.body["errors"] = problems
	rep.body["response_metadata"] = map[string]any{"messages": msgs}
	return rep
}
