package fakemodel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/h9-app/h9/workspace/netx"
	openai "github.com/sashabaranov/go-openai"
)

// chat serves POST /v1/chat/completions (and Azure's routes).
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: reading the request: "+err.Error())
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: request body is not a chat request: "+err.Error())
		return
	}
	s.received(req, body, r.Header)
	if fault, refused := s.check(r, body, &req); refused {
		s.serve(w, r, req, fault)
		return
	}
	reply, latency, ok := s.next(req.ChatCompletionRequest)
	if !ok {
		writeError(w, http.StatusBadRequest, "", "fakemodel: no scripted reply left")
		return
	}
	if !wait(r, latency+reply.Latency) {
		return
	}
	s.serve(w, r, req, reply)
}

// serve sends a reply: a fault, a stream or one completion.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, req request, reply Reply) {
	for k, vs := range reply.Header {
		w.Header()[k] = vs
	}
	switch {
	case reply.Drop == DropBeforeResponse:
		closeConn(w)
	case reply.RawBody != "":
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeMaybeCut(w, max(reply.Status, http.StatusOK), []byte(reply.RawBody), reply.Drop == DropMidBody)
	case reply.Status >= 400:
		writeError(w, reply.Status, reply.RetryAfter, http.StatusText(reply.Status)+" (scripted fault)")
	case req.Stream:
		s.stream(w, r, req, reply)
	default:
		data, _ := json.Marshal(s.response(req, reply))
		writeMaybeCut(w, http.StatusOK, append(data, '\n'), reply.Drop == DropMidBody)
	}
}

// writeMaybeCut writes a JSON body, or, when cut, its first half under a
// Content-Length for all of it, then closes the connection.
func writeMaybeCut(w http.ResponseWriter, status int, body []byte, cut bool) {
	w.Header().Set("Content-Type", "application/json")
	if !cut {
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body[:len(body)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// closeConn drops the connection without a response.
func closeConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// listModels serves GET /v1/models.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids, key := append([]string(nil), s.models...), s.apiKey
	s.mu.Unlock()
	if ids == nil {
		http.NotFound(w, r)
		return
	}
	if fault, refused := checkAuth(r, key); refused {
		writeBody(w, fault.Status, fault.RawBody)
		return
	}
	list := openai.ModelsList{}
	for _, id := range ids {
		list.Models = append(list.Models, openai.Model{ID: id, Object: "model", OwnedBy: "fakemodel"})
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(list)
	writeBody(w, http.StatusOK, buf.String())
}

// wait sleeps d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	return d <= 0 || netx.Sleep(r.Context(), d) == nil
}
