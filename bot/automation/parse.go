package automation

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/workspace/keyhint"
	yaml "go.yaml.in/yaml/v3"
)

// Env is what checking a file needs to know of the rest of h9.
type Env struct {
	// Getenv reads a webhook's secret_env (os.LookupEnv by default).
	Getenv func(string) (string, bool)
	// Admins: H9_ADMINS names someone; without, every automation needs an owner.
	Admins bool
	// Repos are the configured repositories' keys (an operator's repo:
	// must name one); nil = not checked.
	Repos []string
	// MinInterval is H9_AUTOMATION_MIN_INTERVAL (0 = the default).
	MinInterval time.Duration
	// Now is when the file is read (the schedules' horizon starts there);
	// zero = time.Now().
	Now time.Time
}

// RepoFile is a repository's own file and what it may use.
type RepoFile struct {
	Repo     string   // the repository's key: names become <repo>/<name>
	Channels []string // the repository's channels: an automation's channel must be one
}

// RepoFilePath is where a repository keeps its automations, on its
// default branch.
const RepoFilePath = ".h9/automations.yaml"

// LoadFile reads and checks the operator's H9_AUTOMATIONS_FILE. Any
// problem, a webhook secret that is not set included, is an error of one
// line naming the file, the line and what is wrong.
func LoadFile(path string, env Env) ([]*Automation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: H9_AUTOMATIONS_FILE: cannot read %s: %v", ErrInvalid, path, err)
	}
	return Parse(Source{File: path}, data, env)
}

// ParseRepoFile checks a repository's .h9/automations.yaml. A webhook
// secret that is not set is not an error here: that automation is Broken,
// and each of its occurrences fails saying why.
func ParseRepoFile(rf RepoFile, data []byte, env Env) ([]*Automation, error) {
	return parseFile(Source{File: rf.Repo + "/" + RepoFilePath, Repo: rf.Repo}, rf.Channels, data, env)
}

// Parse checks the YAML of the operator's file; src names it in errors.
func Parse(src Source, data []byte, env Env) ([]*Automation, error) {
	return parseFile(src, nil, data, env)
}

// entryKeys and the trigger keys, in the order the contract's table lists
// them (ARCHITECTURE.md, "Automations").
var (
	entryKeys   = []string{"name", "channel", "owner", "repo", "task", "mode", "on", "timezone", "dedupe", "budget", "daily_budget", "overlap"}
	triggerKeys = []string{"schedule", "issue", "check", "message", "webhook"}
	issueKeys   = []string{"label", "assigned"}
	checkKeys   = []string{"branch"}
	messageKeys = []string{"channel", "from", "match"}
	webhookKeys = []string{"secret_env"}
	// keySynonyms are words people write for a key.
	keySynonyms = map[string]string{"trigger": "on", "when": "on", "cron": "schedule", "prompt": "task", "instructions": "task",
		"tz": "timezone", "time_zone": "timezone", "secret": "secret_env", "labels": "label", "users": "from", "bots": "from",
		"regex": "match", "pattern": "match", "repository": "repo", "user": "owner"}
)

// problem is one thing wrong at one line.
type problem struct {
	line int
	text string
}

func (p *problem) Error() string { return fmt.Sprintf("line %d: %s", p.line, p.text) }

func bad(n *yaml.Node, format string, args ...any) *problem {
	return &problem{line: n.Line, text: fmt.Sprintf(format, args...)}
}

func parseFile(src Source, channels []string, data []byte, env Env) ([]*Automation, error) {
	label := "H9_AUTOMATIONS_FILE " + src.File
	if src.Repo != "" {
		label = src.File
	}
	list, err := parseEntries(src, channels, data, env)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, label, oneLine(err.Error()))
	}
	return list, nil
}

func parseEntries(src Source, channels []string, data []byte, env Env) ([]*Automation, error) {
	if env.Getenv == nil {
		env.Getenv = os.LookupEnv
	}
	if env.MinInterval == 0 {
		env.MinInterval = DefaultMinInterval
	}
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("the file is empty: it holds one key, automations:, a list of entries")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, bad(top, "the file holds one key, automations:, a list of entries")
	}
	var entries *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "automations" {
			return nil, bad(k, "%s", unknownKey(k.Value, []string{"automations"}))
		}
		entries = v
	}
	if entries == nil {
		return nil, bad(top, "no automations: key")
	}
	if entries.Kind == yaml.ScalarNode && entries.Tag == "!!null" {
		return nil, nil
	}
	if entries.Kind != yaml.SequenceNode {
		return nil, bad(entries, "automations: must be a list of entries (- name: …)")
	}
	var out []*Automation
	seen := map[string]int{}
	for _, e := range entries.Content {
		a, err := parseEntry(src, channels, e, env)
		if err != nil {
			return nil, err
		}
		if line, dup := seen[a.Name]; dup {
			return nil, bad(e, "automation %q: the name is used by the entry at line %d", a.Name, line)
		}
		seen[a.Name] = e.Line
		if src.Repo != "" {
			a.Name = src.Repo + "/" + a.Name
		}
		out = append(out, a)
	}
	return out, nil
}

// fields is an entry's mapping by key, with duplicate and unknown keys
// refused.
func fields(n *yaml.Node, known []string, what string) (map[string]*yaml.Node, map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, bad(n, "%s must be a mapping (key: value)", what)
	}
	vals, keys := map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			return nil, nil, bad(k, "%s: %s", what, unknownKey(k.Value, known))
		}
		if prev, dup := keys[k.Value]; dup {
			return nil, nil, bad(k, "%s: key %q given twice (first at line %d)", what, k.Value, prev.Line)
		}
		vals[k.Value], keys[k.Value] = v, k
	}
	return vals, keys, nil
}

// text reads a scalar key as text ("" when absent).
func text(f map[string]*yaml.Node, key, what string) (string, error) {
	v, ok := f[key]
	if !ok || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", bad(v, "%s: %s must be text", what, key)
	}
	return strings.TrimSpace(v.Value), nil
}

func parseEntry(src Source, channels []string, e *yaml.Node, env Env) (*Automation, error) {
	f, keys, err := fields(e, entryKeys, "an automation")
	if err != nil {
		return nil, err
	}
	name, err := text(f, "name", "an automation")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, bad(e, "an automation without a name")
	}
	what := fmt.Sprintf("automation %q", name)
	if !nameRE.MatchString(name) {
		return nil, bad(f["name"], "%s: a name has 1 to 40 of a-z, 0-9 and -", what)
	}
	a := &Automation{Name: name, Source: src, Line: e.Line, Mode: ModePlan, Overlap: OverlapSkip, Zone: time.UTC}
	get := func(key string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = text(f, key, what)
		return s
	}
	a.Channel, a.Owner, a.Repo, a.Task = get("channel"), get("owner"), get("repo"), get("task")
	mode, zone, overlap := get("mode"), get("timezone"), get("overlap")
	a.Dedupe = get("dedupe")
	budget, daily := get("budget"), get("daily_budget")
	if err != nil {
		return nil, err
	}
	on, ok := f["on"]
	if !ok {
		return nil, bad(e, "%s: no on: key (one of %s)", what, strings.Join(triggerKeys, ", "))
	}
	if err := parseTrigger(a, on, what); err != nil {
		return nil, err
	}
	at := func(key string) *yaml.Node {
		if n, ok := keys[key]; ok {
			return n
		}
		return e
	}
	if a.Channel == "" && a.Trigger.Kind == KindMessage {
		a.Channel = a.Trigger.Watch
	}
	switch {
	case a.Channel == "":
		return nil, bad(e, "%s: no channel: the channel ID where its sessions start", what)
	case !channelRE.MatchString(a.Channel):
		return nil, bad(at("channel"), "%s: channel %q is not a channel ID (C012AB3CD: in Slack, the channel's details → About)", what, a.Channel)
	case src.Repo != "" && !slices.Contains(channels, a.Channel):
		return nil, bad(at("channel"), "%s: channel %s is not one of %s's channels (%s)", what, a.Channel, src.Repo, strings.Join(channels, ", "))
	case a.Owner != "" && !userRE.MatchString(a.Owner):
		return nil, bad(at("owner"), "%s: owner %q is not a Slack user ID (U012AB3CD)", what, a.Owner)
	case a.Owner == "" && !env.Admins:
		return nil, bad(e, "%s: no owner, and H9_ADMINS names nobody: someone must approve its sessions", what)
	case a.Task == "":
		return nil, bad(at("task"), "%s: no task: the instruction its sessions carry out", what)
	}
	if err := checkRepo(a, src, env, at("repo"), what); err != nil {
		return nil, err
	}
	if mode != "" {
		if a.Mode = Mode(mode); a.Mode != ModePlan && a.Mode != ModeRun {
			return nil, bad(at("mode"), "%s: mode is plan or run, not %q", what, mode)
		}
	}
	if overlap != "" {
		if a.Overlap = Overlap(overlap); a.Overlap != OverlapSkip && a.Overlap != OverlapQueue {
			return nil, bad(at("overlap"), "%s: overlap is skip or queue, not %q", what, overlap)
		}
	}
	if zone != "" {
		loc, err := time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			return nil, bad(at("timezone"), "%s: timezone %q is not an IANA zone (Europe/Paris, America/New_York, UTC)", what, zone)
		}
		a.Zone = loc
	}
	for key, dst := range map[string]*int64{"budget": &a.Budget, "daily_budget": &a.DailyBudget} {
		s := map[string]string{"budget": budget, "daily_budget": daily}[key]
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil || n < 0 {
			return nil, bad(at(key), "%s: %s is a number of tokens (0 or more), not %q", what, key, s)
		}
		*dst = n
	}
	if err := compile(a, src, env, at, what); err != nil {
		return nil, err
	}
	return a, nil
}

func checkRepo(a *Automation, src Source, env Env, at *yaml.Node, what string) error {
	switch {
	case src.Repo != "" && a.Repo != "" && a.Repo != src.Repo:
		return bad(at, "%s: repo is %s here (this is %s's file); leave it out", what, src.Repo, src.Repo)
	case src.Repo != "":
		a.Repo = src.Repo
	case a.Repo == "" && (a.Trigger.Kind == KindIssue || a.Trigger.Kind == KindCheck):
		return bad(at, "%s: an %s trigger needs repo: the repository it watches", what, a.Trigger.Kind)
	case a.Repo != "" && env.Repos != nil && !slices.Contains(env.Repos, a.Repo):
		return bad(at, "%s: repo %q is not a configured repository (%s)", what, a.Repo, strings.Join(env.Repos, ", "))
	}
	return nil
}

func parseTrigger(a *Automation, on *yaml.Node, what string) error {
	f, keys, err := fields(on, triggerKeys, what+": on:")
	if err != nil {
		return err
	}
	if len(f) != 1 {
		return bad(on, "%s: on: holds exactly one trigger (one of %s), not %d", what, strings.Join(triggerKeys, ", "), len(f))
	}
	t := &a.Trigger
	for k, v := range f {
		t.Kind = Kind(k)
		at := keys[k]
		var sub map[string]*yaml.Node
		if v.Kind == yaml.MappingNode {
			if sub, _, err = fields(v, map[Kind][]string{KindIssue: issueKeys, KindCheck: checkKeys, KindMessage: messageKeys, KindWebhook: webhookKeys}[t.Kind], what+": "+k); err != nil {
				return err
			}
		}
		get := func(key string) string {
			if err != nil {
				return ""
			}
			var s string
			s, err = text(sub, key, what+": "+k)
			return s
		}
		switch t.Kind {
		case KindSchedule:
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				return bad(at, "%s: schedule is a 5-field cron line in quotes (\"0 9 * * 1\")", what)
			}
			t.Schedule = strings.TrimSpace(v.Value)
			continue
		case KindCheck:
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue // the default branch
			}
		}
		if sub == nil {
			return bad(v, "%s: %s must be a mapping (%s: {%s: …})", what, k, k, map[Kind]string{KindIssue: "label", KindCheck: "branch", KindMessage: "channel", KindWebhook: "secret_env"}[t.Kind])
		}
		switch t.Kind {
		case KindIssue:
			t.Label = get("label")
			assigned := get("assigned")
			if assigned != "" && assigned != "true" {
				return bad(sub["assigned"], "%s: issue: assigned can only be true", what)
			}
			t.Assigned = assigned == "true"
			if (t.Label == "") == !t.Assigned {
				return bad(v, "%s: issue: set exactly one of label and assigned: true", what)
			}
		case KindCheck:
			t.Branch = get("branch")
			if t.Branch != "" && branchBadRE.MatchString(t.Branch) {
				return bad(sub["branch"], "%s: check: %q is not a branch name", what, t.Branch)
			}
		case KindMessage:
			t.Watch, t.Match = get("channel"), get("match")
			if err != nil {
				return err
			}
			if err := parseFrom(t, sub, v, what); err != nil {
				return err
			}
			switch {
			case !channelRE.MatchString(t.Watch):
				return bad(v, "%s: message: channel must be the channel ID it watches (C012AB3CD), not %q", what, t.Watch)
			case t.Match == "":
				return bad(v, "%s: message: no match: the regular expression a message's text must match", what)
			}
			re, rerr := regexp.Compile(t.Match)
			if rerr != nil {
				return bad(sub["match"], "%s: message: match is not a regular expression: %v", what, rerr)
			}
			a.match = re
		case KindWebhook:
			t.SecretEnv = get("secret_env")
			if err == nil && !envNameRE.MatchString(t.SecretEnv) {
				return bad(v, "%s: webhook: secret_env must name the environment variable holding its secret, not %q", what, t.SecretEnv)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseFrom(t *Trigger, sub map[string]*yaml.Node, at *yaml.Node, what string) error {
	from, ok := sub["from"]
	if !ok {
		return bad(at, "%s: message: no from: the user IDs, bot IDs or bot user IDs whose messages count", what)
	}
	items := []*yaml.Node{from}
	if from.Kind == yaml.SequenceNode {
		items = from.Content
	}
	for _, n := range items {
		id := strings.TrimSpace(n.Value)
		if n.Kind != yaml.ScalarNode || !senderRE.MatchString(id) {
			return bad(n, "%s: message: from lists user IDs (U…), bot IDs (B…) or bot user IDs, not %q", what, id)
		}
		t.From = append(t.From, id)
	}
	if len(t.From) == 0 {
		return bad(from, "%s: message: from is empty", what)
	}
	return nil
}

// compile prepares what the trigger needs at run time: the schedule, the
// templates, the regexps, the secret.
func compile(a *Automation, src Source, env Env, at func(string) *yaml.Node, what string) error {
	t := a.Trigger
	if a.Dedupe != "" && t.Kind != KindWebhook && t.Kind != KindMessage {
		return bad(at("dedupe"), "%s: a %s trigger has a natural key; dedupe is for webhook (a template) and message (a regexp)", what, t.Kind)
	}
	switch t.Kind {
	case KindSchedule:
		s, err := ParseSchedule(t.Schedule, a.Zone, env.MinInterval, env.Now)
		if err != nil {
			return bad(at("on"), "%s: schedule %q: %v", what, t.Schedule, err)
		}
		a.schedule = s
	case KindMessage:
		if a.Dedupe != "" {
			re, err := regexp.Compile(a.Dedupe)
			if err != nil || re.NumSubexp() < 1 {
				return bad(at("dedupe"), "%s: dedupe is a regular expression whose first group is the key: %s", what, reErr(err))
			}
			a.dedupeRE = re
		}
	case KindWebhook:
		tmpl, err := parseTemplate("task", a.Task, true)
		if err != nil {
			return bad(at("task"), "%s: task: %v", what, err)
		}
		a.task = tmpl
		if a.Dedupe != "" {
			if a.dedupeTmpl, err = parseTemplate("dedupe", a.Dedupe, false); err != nil {
				return bad(at("dedupe"), "%s: dedupe: %v", what, err)
			}
		}
		secret, ok := env.Getenv(t.SecretEnv)
		switch {
		case ok && secret != "":
			a.secret = []byte(secret)
		case src.Repo == "":
			return bad(at("on"), "%s: webhook: secret_env names %s, which is not set", what, t.SecretEnv)
		default:
			a.Broken = "its webhook secret " + t.SecretEnv + " is not set"
		}
	}
	return nil
}

func reErr(err error) string {
	if err != nil {
		return err.Error()
	}
	return "it has no group"
}

// unknownKey names the key meant, or lists the known ones, as the other
// YAML files of h9 do.
func unknownKey(key string, known []string) string {
	return keyhint.Unknown(key, known, keySynonyms)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
