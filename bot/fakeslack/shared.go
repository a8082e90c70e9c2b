package fakeslack

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
)

// UserFile is a file a user shares on a message (PostUserFiles). The
// server keeps Content as given: do not change it afterwards.
type UserFile struct {
	Name, Mimetype string
	Content        []byte
	// Size is the size the event announces; 0 = len(Content).
	Size int
	// Missing: Slack answers 404 for its download (deleted meanwhile).
	Missing bool
}

// sharedFiles are the files users shared, served at /files-pri/<id>/<name>
// with the bot token only; guarded by Server.mu.
type sharedFiles struct {
	byID      map[string]*UserFile
	meta      map[string]map[string]any // id → its file object, for files.info
	downloads []string                  // ids, one per download served with the bot token
	refused   int                       // downloads without the bot token
}

// Downloads is the ids of the shared files the app downloaded with the bot
// token, one per download, and how many downloads came without it.
func (s *Server) Downloads() (ids []string, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.shared.downloads...), s.shared.refused
}

// PostUserFiles posts a user's message sharing files (subtype file_share,
// "files" with url_private_download, as Slack sends it) and delivers its
// message event. It returns the message's ts.
func (s *Server) PostUserFiles(ctx context.Context, user, channel, threadTS, text string, files []UserFile) (string, error) {
	s.mu.Lock()
	m := s.addUserMessageLocked(user, channel, threadTS, text)
	ev := s.messageEventLocked(m)
	ev["subtype"], ev["upload"], ev["files"] = "file_share", false, s.shareLocked(user, files)
	e := s.eventEnvelopeLocked("", ev)
	s.mu.Unlock()
	_, err := s.deliver(ctx, e)
	return m.TS, err
}

// MentionFiles is Mention with files shared on the message: an app_mention
// and a file_share message event, both with the files.
func (s *Server) MentionFiles(ctx context.Context, user, channel, threadTS, text string, files []UserFile) (string, error) {
	s.mu.Lock()
	mention := "<@" + s.opts.BotUserID + ">"
	if !strings.Contains(text, mention) {
		text = mention + " " + text
	}
	m := s.addUserMessageLocked(user, channel, threadTS, text)
	meta := s.shareLocked(user, files)
	ev := s.messageEventLocked(m)
	ev["type"], ev["files"], ev["upload"] = "app_mention", meta, false
	delete(ev, "channel_type")
	first := s.eventEnvelopeLocked("", ev)
	msg := s.messageEventLocked(m)
	msg["subtype"], msg["files"], msg["upload"] = "file_share", meta, false
	second := s.eventEnvelopeLocked("", msg)
	s.mu.Unlock()
	if _, err := s.deliver(ctx, first); err != nil {
		return m.TS, err
	}
	_, err := s.deliver(ctx, second)
	return m.TS, err
}

// shareLocked stores files and returns their event objects.
func (s *Server) shareLocked(user string, files []UserFile) []map[string]any {
	if s.shared.byID == nil {
		s.shared.byID, s.shared.meta = map[string]*UserFile{}, map[string]map[string]any{}
	}
	var out []map[string]any
	for _, f := range files {
		id := fmt.Sprintf("FU%07d", s.nextSeqLocked())
		c := f // Content is served as given, not copied: a benchmark's 20 MiB stays one buffer
		s.shared.byID[id] = &c
		size := f.Size
		if size == 0 {
			size = len(f.Content)
		}
		url := s.srv.URL + "/files-pri/" + s.opts.TeamID + "-" + id + "/" + neturl.PathEscape(f.Name) // as Slack escapes it
		obj := map[string]any{"id": id, "name": f.Name, "title": f.Name, "mimetype": f.Mimetype,
			"filetype": "", "user": user, "mode": "hosted", "size": size, "url_private": url,
			"url_private_download": url + "?dl=1", "is_external": false}
		s.shared.meta[id] = obj
		out = append(out, obj)
	}
	return out
}

// serveSharedFile serves a shared file to the bot token only. Without it,
// Slack answers 200 with its sign-in page (HTML), not an error: an app
// missing files:read sees the same.
func (s *Server) serveSharedFile(w http.ResponseWriter, hr *http.Request) {
	rest := strings.TrimPrefix(hr.URL.Path, "/files-pri/"+s.opts.TeamID+"-")
	id, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	f := s.shared.byID[id]
	authorized := hr.Header.Get("Authorization") == "Bearer "+s.opts.BotToken
	switch {
	case !authorized:
		s.shared.refused++
	case f != nil && !f.Missing:
		s.shared.downloads = append(s.shared.downloads, id)
	}
	s.mu.Unlock()
	switch {
	case !authorized:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>")
	case f == nil || f.Missing:
		http.Error(w, "file not found", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
		w.Write(f.Content)
	}
}

// ShareFile stores a user's file without posting a message and returns
// its url_private_download.
func (s *Server) ShareFile(user string, f UserFile) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shareLocked(user, []UserFile{f})[0]["url_private_download"].(string)
}

// filesInfo answers files.info for a file a user shared (the bot token
// only, as every Web API method here checks).
func (s *Server) filesInfo(r *apiRequest) reply {
	obj, found := s.shared.meta[r.get("file")]
	if !found || s.shared.byID[r.get("file")].Missing {
		return fail("file_not_found")
	}
	return ok(map[string]any{"file": obj})
}
