package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/workspace"
)

// Workspaces opens a session's workspace, creating it when it is new;
// *workspace.Manager is one. The bot writes attachments through it, so
// they are confined like every file the agent writes.
type Workspaces interface {
	Open(sessionID string) (*workspace.Workspace, error)
}

// fileTimeout bounds one attachment's download.
const fileTimeout = 2 * time.Minute

// fetchAttachments downloads the request's files that are not in the
// workspace yet (a retry or a restart finds them there). It returns the
// files the run may name and one line per file that failed, naming it.
func (b *Bot) fetchAttachments(ctx context.Context, log *slog.Logger, id string, files []agent.Attachment) ([]agent.Attachment, []string) {
	if b.cfg.Workspaces == nil {
		return nil, []string{"h9 has no workspace to put files in, so the message's files were not downloaded"}
	}
	ws, err := b.cfg.Workspaces.Open(id)
	if err != nil {
		log.Error("opening the workspace for attachments", "err", err)
		return nil, []string{"h9 could not open the session's workspace, so the message's files were not downloaded"}
	}
	defer ws.Close()
	var got []agent.Attachment
	var failed []string
	for _, f := range files {
		if err := b.fetchAttachment(ctx, ws, f); err != nil {
			log.Warn("attachment not downloaded", "file", f.Name, "err", err)
			failed = append(failed, fileLabel(f.Name)+": "+err.Error())
			continue
		}
		got = append(got, f)
	}
	return got, failed
}

// fetchAttachment downloads one file into its path, streaming.
func (b *Bot) fetchAttachment(ctx context.Context, ws *workspace.Workspace, f agent.Attachment) error {
	if present(ws, f) {
		return nil
	}
	if !b.slackFileURL(f.Source) {
		return errors.New("its link does not lead to Slack, so h9 did not send its token there")
	}
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Source, nil)
	if err != nil {
		return errors.New("its link is not a valid URL")
	}
	req.Header.Set("Authorization", "Bearer "+b.cfg.BotToken)
	resp, err := b.files.Do(req)
	if err != nil {
		return fmt.Errorf("it could not be fetched: Slack did not answer (%s)", errWords(err))
	}
	defer resp.Body.Close()
	limit := b.cfg.attachmentMax()
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fmt.Errorf("it was not served (Slack answered %s)", resp.Status)
	case isWebPage(resp.Header.Get("Content-Type")) && !isWebPage(mime.TypeByExtension(extOf(f.Name))):
		return errors.New("instead of the file, Slack sent a sign-in page (the app may lack the files:read scope: reinstall it from manifest.yml)")
	case resp.ContentLength > limit:
		return fmt.Errorf("it is %s, over the %s limit (H9_ATTACHMENT_MAX)", sizeWords(resp.ContentLength), sizeWords(limit))
	}
	n, err := ws.WriteFrom(f.Path, resp.Body, limit)
	switch {
	case errors.Is(err, workspace.ErrTooLarge):
		return fmt.Errorf("it is over the %s limit (H9_ATTACHMENT_MAX)", sizeWords(limit))
	case err != nil && ctx.Err() != nil:
		return errors.New("its download was cut off")
	case err != nil:
		return fmt.Errorf("it could not be saved in the workspace (%s)", errWords(err))
	case f.Size > 0 && n != f.Size:
		ws.Remove(f.Path)
		return fmt.Errorf("it came as %d bytes, not the %d Slack announced", n, f.Size)
	}
	return nil
}

// present: the file is in the workspace already, whole.
func present(ws *workspace.Workspace, f agent.Attachment) bool {
	file, err := ws.OpenFile(f.Path)
	if err != nil {
		return false
	}
	defer file.Close()
	fi, err := file.Stat()
	return err == nil && (f.Size == 0 || fi.Size() == f.Size)
}

// slackFileURL reports whether the bot token may be sent to u: https on a
// Slack host (slack.com, GovSlack's slack-gov.com), or the configured API
// host (a test's fake Slack, a proxy the operator chose).
func (b *Bot) slackFileURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	if api, err := url.Parse(b.cfg.APIURL); err == nil && api.Host == p.Host && api.Scheme == p.Scheme {
		return true
	}
	host := p.Hostname()
	return p.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com") ||
		host == "slack-gov.com" || strings.HasSuffix(host, ".slack-gov.com"))
}

func isWebPage(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html"
}

func extOf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i:]
	}
	return ""
}

// errWords is an error's text without a URL that could carry a token.
func errWords(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// withAttachments downloads the request's files before its run and tells
// the thread which failed. A request left with neither text nor files
// says so to the agent.
func (a *actor) withAttachments(ctx context.Context, id string, req agent.Request, files []agent.Attachment) (agent.Request, []agent.Attachment) {
	if len(files) == 0 {
		return req, nil
	}
	got, failed := a.b.fetchAttachments(ctx, a.log, id, files)
	if len(failed) > 0 {
		a.push(msgNote{text: notFetched(failed)})
	}
	if req.Text == "" && len(got) == 0 {
		req.Text = "The user shared files that h9 could not download; the thread says why. Ask for them again if you need them."
	}
	return req, got
}

func notFetched(lines []string) string {
	if len(lines) == 1 {
		return "h9 could not download one file: " + lines[0] + ". The rest of the message went to the agent."
	}
	return "h9 could not download these files (the rest of the message went to the agent):\n• " + strings.Join(lines, "\n• ")
}

// msgNote: a line for the session's thread from outside the actor.
type msgNote struct{ text string }

func (m msgNote) handle(a *actor) {
	if a.rec != nil && !a.lost {
		a.post(text(m.text))
	}
}
