package bot

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// Automations (ARCHITECTURE.md, "Automations"): the engine in
// bot/automation decides what fires and records each occurrence; the bot
// posts the root message, starts the session and says what the engine
// asks. AutomationMetrics, when Config.Metrics has it, counts the fires.

// AutomationMetrics hears the automations' fires
// (h9_automation_fires_total).
type AutomationMetrics interface {
	AutomationFired(automation, trigger, outcome string)
}

// automationResumeAction is the Resume button on a pause message.
const automationResumeAction = "h9_automation_resume"

// verbAutomations is /h9 automations [pause|resume|run <name>].
const verbAutomations = "automations"

// newAutomations reads H9_AUTOMATIONS_FILE and makes the engine, and the
// refresher of the repositories' own .h9/automations.yaml; nil when there
// is no file and no repository. The store must keep automations' records.
func (b *Bot) newAutomations() error {
	cfg := b.cfg
	if cfg.AutomationsFile == "" && !b.hasRepos() {
		return nil
	}
	raw := cfg.Store
	if t, ok := raw.(timedStore); ok {
		raw = t.s // the engine bounds each of its calls itself
	}
	st, ok := raw.(automation.Store)
	switch {
	case !ok && cfg.AutomationsFile != "":
		return fmt.Errorf("%w: H9_AUTOMATIONS_FILE: this store keeps no automations", ErrInvalidConfig)
	case !ok:
		b.log.Warn("this store keeps no automations: the repositories' .h9/automations.yaml are not read")
		return nil
	}
	var list []*automation.Automation
	if cfg.AutomationsFile != "" {
		var err error
		if list, err = automation.LoadFile(cfg.AutomationsFile, b.automationEnv()); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	host, _ := os.Hostname()
	count := func(string, automation.Kind, string) {}
	if m, ok := cfg.Metrics.(AutomationMetrics); ok {
		count = func(name string, k automation.Kind, outcome string) { m.AutomationFired(name, string(k), outcome) }
	}
	b.autos = automation.NewEngine(automation.Options{
		Config:  automation.Config{File: cfg.AutomationsFile, MinInterval: cfg.AutomationMinInterval, Refresh: cfg.AutomationRefresh},
		Store:   st,
		Bot:     automationSide{b},
		Log:     b.log.With("component", "automations"),
		Replica: fmt.Sprintf("%s/%d", host, os.Getpid()),
		Alone:   cfg.Fleet == nil,
		Count:   count,
		Poll:    cfg.ForgePoll,
	})
	if cfg.Forges != nil {
		b.autos.SetForges(cfg.Forges)
	}
	if reader, ok := cfg.Repos.(automation.RepoReader); ok && b.hasRepos() {
		var files []automation.RepoFile
		for _, r := range cfg.Repos.List() {
			files = append(files, automation.RepoFile{Repo: r.Name, Channels: r.Channels})
		}
		b.repoAutos = automation.NewRepoFiles(b.autos, reader, files, b.automationEnv(), cfg.AutomationRefresh)
	}
	if cfg.AutomationsFile == "" {
		return nil
	}
	return b.autos.Set(cfg.AutomationsFile, list)
}

// repoFetched tells the refresher of the repositories' automations files
// that h9 fetched a repository (ARCHITECTURE.md, "Automations").
func (b *Bot) repoFetched(name string) {
	if b.repoAutos != nil {
		b.repoAutos.Fetched(name)
	}
}

// automationEnv is what checking an automations file needs of the bot.
func (b *Bot) automationEnv() automation.Env {
	env := automation.Env{Admins: len(b.perms.admins) > 0, MinInterval: b.cfg.AutomationMinInterval}
	if b.cfg.Repos != nil {
		env.Repos = []string{}
		for _, r := range b.cfg.Repos.List() {
			env.Repos = append(env.Repos, r.Name)
		}
	}
	return env
}

// HookHandler serves POST /hooks/<name> (cmd/h9 mounts it on
// H9_HTTP_ADDR); nil when no automation is defined.
func (b *Bot) HookHandler() http.Handler {
	if b.autos == nil {
		return nil
	}
	return &automation.HookHandler{Firer: b.autos, Log: b.log.With("component", "webhooks")}
}

// automationSide is the bot as the engine sees it.
type automationSide struct{ b *Bot }

// StartSession posts the root message naming the automation, its owner
// and its source, and gives the thread a new session whose task is the
// request (the operator's task, then the data fenced).
func (s automationSide) StartSession(ctx context.Context, r automation.StartRequest) (automation.Started, error) {
	b := s.b
	log := b.log.With("channel", r.Channel, "automation", r.Automation)
	repo, err := b.resolveRepo(taskOptions{repo: r.Repo}, r.Channel, r.Task)
	if err != nil {
		return automation.Started{}, err
	}
	if repo != nil {
		repo.Closes = r.Issue
		if why := b.repoUnreachable(ctx, repo.Name); why != "" {
			return automation.Started{}, startFailure(why)
		}
	}
	mode := planning.PlanModePlan
	if r.Mode == automation.ModeRun {
		mode = planning.PlanModeDefault
	}
	d := startData{Team: b.sessionTeam(), Owner: r.Owner, Task: r.Request, Mode: mode, Repo: repo, Budget: int(min(r.Budget, 1<<31-1)),
		Automation: &automationRoot{Name: r.Automation, Key: r.Key, Task: r.Task, Source: r.Source}}
	root := rootMessage(d)
	if r.Thread != "" {
		// A matched message: its thread is the session's, and the root
		// message is the thread's first reply.
		if _, err := b.api.PostMessage(ctx, log, r.Channel, r.Thread, root); err != nil {
			return automation.Started{}, startFailure(postFailureHint(err))
		}
		b.reg.deliver(threadKey{channel: r.Channel, ts: r.Thread}, d.create(""))
		return automation.Started{Channel: r.Channel, Thread: r.Thread, Link: b.api.Permalink(ctx, log, r.Channel, r.Thread)}, nil
	}
	id := automationStartID(r)
	if r.Retry {
		// A stopped process may have posted the root message already.
		ts, err := b.api.FindInChannel(ctx, log, r.Channel, time.Now().Add(-24*time.Hour), func(m slack.Message) bool {
			return render.RootStart(m) == id
		})
		if err == nil && ts != "" {
			if _, err := b.store.FindThread(ctx, r.Channel, ts); errors.Is(err, store.ErrNotFound) {
				b.reg.deliver(threadKey{channel: r.Channel, ts: ts}, d.create(id))
			}
			return automation.Started{Channel: r.Channel, Thread: ts, Link: b.api.Permalink(ctx, log, r.Channel, ts)}, nil
		}
	}
	st, err := b.recordStartID(id, r.Channel, d)
	if err != nil {
		return automation.Started{}, startFailure(cannotSaveText)
	}
	ts, err := b.api.PostMessage(ctx, log, r.Channel, "", render.WithStart(root, st.ID))
	if err != nil {
		b.forgetStart(log, st.ID)
		return automation.Started{}, startFailure(postFailureHint(err))
	}
	b.reg.deliver(threadKey{channel: r.Channel, ts: ts}, d.create(st.ID))
	return automation.Started{Channel: r.Channel, Thread: ts, Link: b.api.Permalink(ctx, log, r.Channel, ts)}, nil
}

// remoteChecker asks a repository's remote whether it answers
// (gitrepo.Repos: git ls-remote with the credentials a fetch uses).
type remoteChecker interface {
	CheckRemote(ctx context.Context, name string) (branches int, err error)
}

// repoUnreachable says why an automation's repository cannot be reached,
// "" when it can: asked before the root message, so an occurrence that
// cannot start says so in the channel (ARCHITECTURE.md, "Automations")
// rather than starting a session that ends in "setup failed". ls-remote
// is the cheapest honest check: one round trip, no objects; the cache's
// fetch would clone a new repository under the start's deadline, and
// reports an unreachable remote as a mere warning once a copy is cached.
func (b *Bot) repoUnreachable(ctx context.Context, name string) string {
	c, ok := b.cfg.Repos.(remoteChecker)
	if !ok {
		return ""
	}
	if _, err := c.CheckRemote(ctx, name); err != nil {
		return render.Escape(render.OneLine(err.Error()))
	}
	return ""
}

// Post says text in a channel or thread; resume adds the Resume button.
func (s automationSide) Post(ctx context.Context, channel, thread, msg, resume string) error {
	m := render.Message{Text: msg, Blocks: []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, msg, false, false), nil, nil, slack.SectionBlockOptionBlockID("h9_automation_note")),
	}}
	if resume != "" {
		btn := slack.NewButtonBlockElement(automationResumeAction, resume, slack.NewTextBlockObject(slack.PlainTextType, "Resume", false, false))
		btn.Style = slack.StylePrimary
		m.Blocks = append(m.Blocks, slack.NewActionBlock("h9_automation_actions", btn))
	}
	_, err := s.b.api.PostMessage(ctx, s.b.log.With("channel", channel), channel, thread, m)
	return err
}

// Permalink links the message at ts in channel (chat.getPermalink, or the
// archive link built when Slack cannot say).
func (s automationSide) Permalink(ctx context.Context, channel, ts string) string {
	return s.b.api.Permalink(ctx, s.b.log.With("channel", channel), channel, ts)
}

// SessionOpen reports whether the thread's session is open: not done,
// stalled or cancelled. One not stored yet (its first commit is on its
// way) is open: two sessions must never start for one key.
func (s automationSide) SessionOpen(ctx context.Context, channel, thread string) (bool, error) {
	rec, err := s.b.store.FindThread(ctx, channel, thread)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	sess, err := decodeSession(rec)
	if err != nil {
		return false, err
	}
	switch sess.State {
	case stateDone, stateStalled, stateCancelled:
		return false, nil
	}
	return true, nil
}

// automationRoot is what a root message says of its automation.
type automationRoot struct {
	Name string `json:"name"`
	// Key is the occurrence's: its start is the engine's to finish.
	Key    string `json:"key,omitempty"`
	Task   string `json:"task"`
	Source string `json:"source"`
}

// automationRootMessage: `Automation *<name>* (owner <@U…>) asked h9 to
// plan: <task>` and its source (ARCHITECTURE.md, "Automations").
func automationRootMessage(d startData) render.Message {
	a := d.Automation
	owner := "owner <@" + d.Owner + ">"
	if d.Owner == "" {
		owner = "owner: h9's admins"
	}
	verb := "run"
	if d.Mode == planning.PlanModePlan {
		verb = "plan"
	}
	task := render.Escape(render.Truncate(strings.TrimSpace(a.Task), 2800))
	lead := fmt.Sprintf("Automation *%s* (%s) asked h9 to %s:", render.Escape(a.Name), owner, verb)
	source := "Source: " + a.Source
	return render.Message{
		Text: lead + " " + render.Escape(render.Truncate(render.OneLine(a.Task), 300)),
		Blocks: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, lead, false, false), nil, nil, slack.SectionBlockOptionBlockID("h9_root_who")),
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, task, false, false), nil, nil, slack.SectionBlockOptionBlockID("h9_root_task")),
			slack.NewContextBlock("h9_root_source", slack.NewTextBlockObject(slack.MarkdownType, source, false, false)),
			slack.NewContextBlock("h9_root_hint", slack.NewTextBlockObject(slack.MarkdownType, "Everything for this session happens in this thread; reply here to talk to it.", false, false)),
		},
	}
}

// onAutomationMessage gives a channel message (a person's or another
// app's) to the message triggers, off the socket loop. h9's own posts and
// edits never trigger.
func (b *Bot) onAutomationMessage(e *slackevents.MessageEvent) {
	if b.autos == nil || e.TimeStamp == "" || (e.User != "" && e.User == b.botUserID) {
		return
	}
	switch e.SubType {
	case "", "bot_message", subtypeFileShare:
	default:
		return
	}
	m := automation.Message{Channel: e.Channel, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp, User: e.User, BotID: e.BotID,
		Texts: []string{e.Text}}
	for _, blk := range e.Blocks.BlockSet {
		m.Texts = append(m.Texts, blockText(blk))
	}
	var attachments []slack.Attachment
	if e.Message != nil {
		attachments = e.Message.Attachments
	}
	for _, at := range attachments {
		m.Texts = append(m.Texts, at.Pretext, at.Title, at.Text, at.Fallback)
		for _, f := range at.Fields {
			m.Texts = append(m.Texts, f.Title, f.Value)
		}
	}
	b.afterAck(func() {
		ctx, cancel := context.WithTimeout(b.bg, 2*time.Minute)
		defer cancel()
		b.autos.OnMessage(ctx, m)
	})
}

// blockText is a block's text as a message trigger matches it: a
// section's text and fields, a header's, a context's, a markdown block's,
// and all of a rich text block (sections, lists, quotes, preformatted),
// mentions and links written as Slack writes them in a message's text.
func blockText(blk slack.Block) string {
	switch x := blk.(type) {
	case *slack.SectionBlock:
		var parts []string
		if x.Text != nil {
			parts = append(parts, x.Text.Text)
		}
		for _, f := range x.Fields {
			parts = append(parts, f.Text)
		}
		return strings.Join(parts, "\n")
	case *slack.HeaderBlock:
		if x.Text != nil {
			return x.Text.Text
		}
	case *slack.MarkdownBlock:
		return x.Text
	case *slack.ContextBlock:
		var parts []string
		for _, el := range x.ContextElements.Elements {
			if t, ok := el.(*slack.TextBlockObject); ok {
				parts = append(parts, t.Text)
			}
		}
		return strings.Join(parts, "\n")
	case *slack.RichTextBlock:
		var sb strings.Builder
		richText(&sb, x.Elements)
		return sb.String()
	}
	return ""
}

// richText writes rich text elements' text, one line per section, list
// item, quote or preformatted block.
func richText(sb *strings.Builder, els []slack.RichTextElement) {
	for _, el := range els {
		switch x := el.(type) {
		case *slack.RichTextSection:
			richSection(sb, x.Elements)
		case *slack.RichTextQuote:
			richSection(sb, x.Elements)
		case *slack.RichTextPreformatted:
			richSection(sb, x.Elements)
		case *slack.RichTextList:
			richText(sb, x.Elements)
			continue
		default:
			continue
		}
		sb.WriteString("\n")
	}
}

func richSection(sb *strings.Builder, els []slack.RichTextSectionElement) {
	for _, el := range els {
		switch x := el.(type) {
		case *slack.RichTextSectionTextElement:
			sb.WriteString(x.Text)
		case *slack.RichTextSectionLinkElement:
			sb.WriteString(cmp.Or(x.Text, x.URL))
		case *slack.RichTextSectionUserElement:
			sb.WriteString("<@" + x.UserID + ">")
		case *slack.RichTextSectionChannelElement:
			sb.WriteString("<#" + x.ChannelID + ">")
		case *slack.RichTextSectionUserGroupElement:
			sb.WriteString("<!subteam^" + x.UsergroupID + ">")
		case *slack.RichTextSectionBroadcastElement:
			sb.WriteString("<!" + x.Range + ">")
		case *slack.RichTextSectionEmojiElement:
			sb.WriteString(":" + x.Name + ":")
		case *slack.RichTextSectionDateElement:
			if x.Fallback != nil {
				sb.WriteString(*x.Fallback)
			}
		}
	}
}

// automationStartID is an occurrence's start ID: the same for every try
// of one occurrence, so that a retry finds the root message a stopped
// process posted.
func automationStartID(r automation.StartRequest) string {
	sum := sha256.Sum256([]byte(r.Automation + "\x00" + r.Key))
	return "a" + hex.EncodeToString(sum[:8])
}

// recordStartID is recordStart with the start's ID given.
func (b *Bot) recordStartID(id, channel string, d startData) (store.Start, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return store.Start{}, err
	}
	st := store.Start{ID: id, Channel: channel, At: time.Now(), Data: data}
	return st, b.store.PutStart(b.bg, st)
}

// leftToEngine reports whether a start left behind whose root message is
// not in the channel is the automation engine's to finish: an
// occurrence's start has one owner, the engine, whose sweep claims the
// occurrence and posts its root message if no earlier try did; the start
// sweep posting it too could make two. A start whose occurrence is no
// longer pending (it failed or was settled otherwise) is dropped.
func (b *Bot) leftToEngine(ctx context.Context, log *slog.Logger, st store.Start, d startData) bool {
	if d.Automation == nil || d.Automation.Key == "" || b.autos == nil || b.autos.Get(d.Automation.Name) == nil {
		return false // no engine will start it: the sweep finishes it
	}
	pending, err := b.autos.Pending(ctx, d.Automation.Name, d.Automation.Key)
	switch {
	case err != nil:
		log.Warn("reading a start's occurrence failed; trying again later", "err", err)
	case !pending:
		b.forgetStart(log, st.ID)
	}
	return true
}

// startFailure is why a start failed, as the engine says it after
// "h9 could not start *<name>*: ".
func startFailure(why string) error { return errors.New(strings.TrimRight(why, ". ")) }

// automationSpent adds a run's tokens to its automation's day, if an
// automation started the session (daily_budget), off the actor.
func (b *Bot) automationSpent(key threadKey, tokens int) {
	if b.autos == nil || tokens <= 0 {
		return
	}
	b.tasks.spawn(func() {
		ctx, cancel := context.WithTimeout(b.bg, storeTimeout)
		defer cancel()
		if err := b.autos.SpentIn(ctx, key.channel, key.ts, int64(tokens)); err != nil {
			b.log.Warn("counting an automation's spend failed", "channel", key.channel, "thread", key.ts, "err", err)
		}
	})
}
