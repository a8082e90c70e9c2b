package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// File is a file the app uploaded the way Slack wants it now:
// files.getUploadURLExternal, the bytes to the upload URL, then
// files.completeUploadExternal sharing it into a channel or thread.
type File struct {
	ID, Name, Title string
	Length          int    // as announced to files.getUploadURLExternal
	Content         []byte // as uploaded
	Channel         string // where it was shared; "" until completed
	ThreadTS        string // the thread it was shared in; "" for the channel
	MessageTS       string // the message that shares it
}

// files holds uploads by id; guarded by Server.mu.
type files struct {
	byID  map[string]*File
	order []string
}

// Files returns the files shared in channel ("" = every completed upload), in order.
func (s *Server) Files(channel string) []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []File
	for _, id := range s.files.order {
		f := s.files.byID[id]
		if f.Channel != "" && (channel == "" || f.Channel == channel) {
			c := *f
			c.Content = append([]byte(nil), f.Content...)
			out = append(out, c)
		}
	}
	return out
}

// filesGetUploadURLExternal hands out an upload URL for a named file of a
// given length, on this server, as Slack does on files.slack.com.
func (s *Server) filesGetUploadURLExternal(r *apiRequest) reply {
	name := r.get("filename")
	length, err := strconv.Atoi(r.get("length"))
	switch {
	case name == "":
		return fail("invalid_arguments")
	case err != nil || length <= 0:
		return fail("invalid_arguments")
	}
	if s.files.byID == nil {
		s.files.byID = map[string]*File{}
	}
	id := fmt.Sprintf("F%08d", s.nextSeqLocked())
	s.files.byID[id] = &File{ID: id, Name: name, Length: length}
	s.files.order = append(s.files.order, id)
	return ok(map[string]any{"upload_url": s.srv.URL + "/upload/" + id, "file_id": id})
}

// serveUpload takes a file's bytes (raw, or the "file" field of a
// multipart form); they must match the announced length.
func (s *Server) serveUpload(w http.ResponseWriter, hr *http.Request) {
	id := strings.TrimPrefix(hr.URL.Path, "/upload/")
	data, err := uploadBody(hr)
	s.mu.Lock()
	f := s.files.byID[id]
	status := http.StatusOK
	switch {
	case hr.Method != http.MethodPost || err != nil:
		status = http.StatusBadRequest
	case f == nil:
		status = http.StatusNotFound
	case len(data) != f.Length:
		s.violations = append(s.violations, fmt.Sprintf("upload %s: %d bytes, announced %d", id, len(data), f.Length))
		status = http.StatusBadRequest
	default:
		f.Content = data
	}
	s.calls = append(s.calls, Call{Method: "upload", Params: map[string]string{"file_id": id}, Status: status})
	s.mu.Unlock()
	w.WriteHeader(status)
	fmt.Fprintf(w, "OK - %d", len(data))
}

func uploadBody(hr *http.Request) ([]byte, error) {
	ctype, params, _ := mime.ParseMediaType(hr.Header.Get("Content-Type"))
	if !strings.HasPrefix(ctype, "multipart/") {
		return io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	}
	mr := multipart.NewReader(hr.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if part.FormName() == "file" {
			return io.ReadAll(io.LimitReader(part, 64<<20))
		}
	}
}

// filesCompleteUploadExternal shares uploaded files into channel_id (and
// thread_ts), posting the message that carries them.
func (s *Server) filesCompleteUploadExternal(r *apiRequest) reply {
	var list []struct{ ID, Title string }
	if err := json.Unmarshal([]byte(r.get("files")), &list); err != nil || len(list) == 0 {
		return fail("invalid_arguments")
	}
	channel, thread := r.get("channel_id"), r.get("thread_ts")
	switch {
	case channel == "" && thread != "":
		return fail("invalid_arguments")
	case channel != "" && !validChannel(channel):
		return fail("channel_not_found")
	case thread != "":
		if _, found := s.threadRootLocked(channel, thread); !found {
			return fail("invalid_thread_ts")
		}
	}
	var out []map[string]any
	var ids []string
	for _, item := range list {
		f := s.files.byID[item.ID]
		if f == nil || f.Content == nil {
			return fail("file_not_found")
		}
		f.Title = item.Title
		ids = append(ids, f.ID)
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	if channel != "" {
		m := s.postBotMessageLocked(channel, s.threadOfLocked(channel, thread), r.get("initial_comment"), nil)
		m.Files = ids
		for _, id := range ids {
			f := s.files.byID[id]
			f.Channel, f.ThreadTS, f.MessageTS = channel, m.ThreadTS, m.TS
		}
	}
	return ok(map[string]any{"files": out})
}

// filesJSONLocked is the files a message shares, as Slack lists them with
// the message (conversations.replies, conversations.history).
func (s *Server) filesJSONLocked(ids []string) []map[string]any {
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		if f := s.files.byID[id]; f != nil {
			out = append(out, map[string]any{"id": f.ID, "name": f.Name, "title": f.Title, "size": f.Length})
		}
	}
	return out
}
