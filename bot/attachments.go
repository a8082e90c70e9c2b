package bot

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// Attachments (ARCHITECTURE.md, "Files and images from the thread"): the
// files shared on a session's message are checked when the message
// arrives (count, announced size, name) and downloaded when the run that
// takes the message starts (attachfetch.go), so a reply queued behind a
// run, or a restart in between, keeps its files in the session's record.

// maxFilesPerMessage is how many files of one message h9 takes.
const maxFilesPerMessage = 10

// DefaultAttachmentMax is the largest file h9 downloads when the
// configuration names none.
const DefaultAttachmentMax = 20 << 20

// sharedFile is a file on a Slack message, as its event names it; the
// durable inbox carries it between replicas.
type sharedFile struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	Type string `json:"type,omitempty"` // Slack's mimetype
	Size int64  `json:"size,omitempty"`
	URL  string `json:"url,omitempty"` // url_private_download
	Mode string `json:"mode,omitempty"`
}

// filesOf takes what h9 needs of an event's files.
func filesOf(files []slack.File) []sharedFile {
	var out []sharedFile
	for _, f := range files {
		url := f.URLPrivateDownload
		if url == "" {
			url = f.URLPrivate
		}
		out = append(out, sharedFile{ID: f.ID, Name: f.Name, Type: f.Mimetype, Size: int64(f.Size), URL: url, Mode: f.Mode})
	}
	return out
}

// tsRE is a Slack message timestamp, the prefix of every attachment's name.
var tsRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// maxNameBytes keeps a file's name (after its ts prefix) within what every
// file system takes (255 bytes).
const maxNameBytes = 200

// safeName is the name an attachment gets in .h9/attachments/ (after its
// "<ts>-" prefix, so a leading dot neither hides it nor makes "..", and
// nothing can leave the folder): path separators, control characters and
// bytes that are not UTF-8 become "_", and a name over maxNameBytes is cut,
// keeping its extension. The agent is told the original name too.
func safeName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	if name == "" {
		name = "file"
	}
	if len(name) <= maxNameBytes {
		return name
	}
	ext := path.Ext(name)
	if len(ext) > 16 {
		ext = ""
	}
	return cutUTF8(strings.TrimSuffix(name, ext), maxNameBytes-len(ext)) + ext
}

// cutUTF8 is s cut to at most n bytes on a character boundary.
func cutUTF8(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// unique makes name distinct from the names of the message's earlier
// files (two files may share a name, or two names one safe name):
// "notes.txt", then "notes-2.txt".
func unique(name string, taken map[string]bool) string {
	base, ext := strings.TrimSuffix(name, path.Ext(name)), path.Ext(name)
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d%s", base, i, ext)
	}
	taken[name] = true
	return name
}

// attachments checks a message's files: what may be downloaded, with the
// workspace path each gets, and one line per file refused, naming it.
func (b *Bot) attachments(ts string, files []sharedFile) (take []agent.Attachment, refused []string) {
	limit := b.cfg.attachmentMax()
	taken := map[string]bool{}
	for i, f := range files {
		label := fileLabel(f.Name)
		var err error
		switch {
		case i >= maxFilesPerMessage:
			err = fmt.Errorf("h9 takes at most %d files per message", maxFilesPerMessage)
		case !tsRE.MatchString(ts):
			err = fmt.Errorf("its message has no usable timestamp")
		case f.Mode == "tombstone" || f.Mode == "hidden_by_limit" || f.URL == "":
			err = fmt.Errorf("there is no download link for it")
		case f.Size > limit:
			err = fmt.Errorf("it is %s, over the %s limit (H9_ATTACHMENT_MAX)", sizeWords(f.Size), sizeWords(limit))
		}
		if err != nil {
			refused = append(refused, label+": "+err.Error())
			continue
		}
		name := unique(safeName(f.Name), taken)
		take = append(take, agent.Attachment{Path: path.Join(agent.AttachmentsDir, ts+"-"+name), Name: f.Name,
			Size: f.Size, Source: f.URL})
	}
	return take, refused
}

// refusedFiles is the thread's message about files h9 did not take.
func refusedFiles(lines []string) string {
	if len(lines) == 1 {
		return "h9 did not take one file: " + lines[0] + ". Everything else of the message went to the agent."
	}
	return "h9 did not take these files (everything else of the message went to the agent):\n• " + strings.Join(lines, "\n• ")
}

// sizeWords writes a byte count in binary units.
func sizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// attachmentMax is the configured per-file limit.
func (cfg Config) attachmentMax() int64 {
	if cfg.AttachmentMax > 0 {
		return cfg.AttachmentMax
	}
	return DefaultAttachmentMax
}

// takeFiles checks a reply's files and tells the thread which it refused.
func (a *actor) takeFiles(ts string, shared []sharedFile) []agent.Attachment {
	take, refused := a.b.attachments(ts, shared)
	a.postRefused(refused)
	return take
}

func (a *actor) postRefused(refused []string) {
	if len(refused) > 0 && a.rec != nil {
		a.post(text(refusedFiles(refused)))
	}
}

// subtypeFileShare is the subtype of a message that shares files: a user
// message like any other, for h9.
const subtypeFileShare = "file_share"

// messageFiles are the files of a message event: slack-go puts a plain
// message's fields under Message.
func messageFiles(e *slackevents.MessageEvent) []sharedFile {
	if e.Message == nil {
		return nil
	}
	return filesOf(e.Message.Files)
}

// fileLabel names a shared file in a thread message: as inline code,
// escaped (a name is the user's text: no mention or link may come of it)
// and cut.
func fileLabel(name string) string {
	if name == "" {
		return "a file without a name"
	}
	return "`" + render.Escape(render.Truncate(strings.ReplaceAll(name, "`", "'"), 100)) + "`"
}
