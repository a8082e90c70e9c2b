package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

const (
	manifestPath = "../../manifest.yml"
	schemaPath   = "testdata/slack-app-manifest.schema.1.0.0.json" // MIT, Slack Technologies: see testdata/NOTICE
)

// re2Equivalents maps the schema's patterns that use look-ahead (which Go's RE2 lacks)
// to equivalent RE2 patterns, so nothing in the schema is silently skipped.
var re2Equivalents = map[string]string{
	// unfurl domains: at least two of [-a-z0-9.], not starting with . or -, ending in [a-z0-9].
	`^(?![\.\-])([-a-z0-9\.])+([a-z0-9])$`: `^[a-z0-9][-a-z0-9.]*[a-z0-9]$`,
}

func re2Engine(pattern string) (jsonschema.Regexp, error) {
	if eq, found := re2Equivalents[pattern]; found {
		pattern = eq
	}
	return regexp.Compile(pattern)
}

func manifestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(re2Engine)
	if err := c.AddResource("manifest.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func readManifest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// validateManifest converts YAML to JSON and checks it against the schema and the scope list.
func validateManifest(sch *jsonschema.Schema, yml string) error {
	js, err := yaml.YAMLToJSON([]byte(yml))
	if err != nil {
		return fmt.Errorf("YAML: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return err
	}
	// The schema accepts any string as a scope or event; Slack does not.
	m, err := parseManifest(yml)
	if err != nil {
		return err
	}
	for _, s := range m.OAuthConfig.Scopes.Bot {
		if !slices.Contains(knownBotScopes, s) {
			return fmt.Errorf("unknown bot scope %q", s)
		}
	}
	for _, e := range m.Settings.EventSubscriptions.BotEvents {
		if !slices.Contains(knownBotEvents, e) {
			return fmt.Errorf("unknown bot event %q", e)
		}
	}
	return nil
}

func TestManifestValidatesAgainstSlackSchema(t *testing.T) {
	if err := validateManifest(manifestSchema(t), readManifest(t)); err != nil {
		t.Fatalf("manifest.yml is invalid:\n%v", err)
	}
}

func TestManifestBrokenCopiesFail(t *testing.T) {
	sch := manifestSchema(t)
	good := readManifest(t)
	tests := []struct {
		name, old, new string
		bySchema       bool // the official schema catches it (else our scope/event lists do)
	}{
		{"misspelled display_information", "display_information:", "display_informaton:", true},
		{"misspelled settings key", "  interactivity:", "  interactivty:", true},
		{"misspelled socket mode key", "socket_mode_enabled:", "socket_mod_enabled:", true},
		{"socket mode as a string", "socket_mode_enabled: true", `socket_mode_enabled: "true"`, true},
		{"command without slash", "- command: /h9", "- command: h9", true},
		{"name too long", "  name: h9\n", "  name: " + strings.Repeat("h", 36) + "\n", true},
		{"bad scope", "- chat:write.public", "- chat:write.publc", false},
		{"bad event", "- message.im", "- message.dm", false},
		{"five suggested prompts", "  slash_commands:", strings.Repeat("      - title: One more\n        message: \"plan more\"\n", 2) + "  slash_commands:", true},
		{"agent_view misspelled key", "agent_description:", "agent_descripton:", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("manifest.yml no longer contains %q; update the test", tt.old)
			}
			err := validateManifest(sch, strings.Replace(good, tt.old, tt.new, 1))
			if err == nil {
				t.Fatalf("a manifest with %q → %q passed validation", tt.old, tt.new)
			}
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) != tt.bySchema {
				t.Errorf("caught by schema = %v, want %v: %v", !tt.bySchema, tt.bySchema, err)
			}
		})
	}
}

func TestManifestHasWhatTheBotNeeds(t *testing.T) {
	m, err := parseManifest(readManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"app_mentions:read", "channels:history", "groups:history", "im:history",
		"chat:write", "chat:write.public", "commands", "reactions:write", "files:write", "files:read", "users:read", "users:read.email", "assistant:write"} {
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, s) {
			t.Errorf("bot scope %s missing", s)
		}
	}
	for _, e := range []string{"app_mention", "message.channels", "message.groups", "message.im", "app_home_opened", "agent_session_stopped"} {
		if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, e) {
			t.Errorf("bot event %s missing", e)
		}
	}
	i := slices.IndexFunc(m.Features.SlashCommands, func(c slashCommand) bool { return c.Command == "/h9" })
	if i < 0 {
		t.Fatal("no /h9 slash command")
	}
	if c := m.Features.SlashCommands[i]; c.UsageHint != "plan [repo=NAME] <task> | run [repo=NAME] <task> | status | repo NAME | repos | instructions [set <text> | clear] | help" || c.ShouldEscape || c.Description == "" {
		t.Errorf("/h9 = %+v", c)
	}
	s := m.Settings
	if !s.SocketModeEnabled || !s.Interactivity.IsEnabled || s.OrgDeployEnabled || s.TokenRotationEnabled {
		t.Errorf("settings = %+v: want socket mode and interactivity on, org deploy and token rotation off", s)
	}
	if av := m.Features.AgentView; av.AgentDescription == "" || len(av.SuggestedPrompts) < 1 || len(av.SuggestedPrompts) > 4 {
		t.Errorf("agent_view = %+v: want a description and one to four suggested prompts", av)
	}
	if m.Features.BotUser.DisplayName == "" || !m.Features.AppHome.MessagesTabEnabled {
		t.Errorf("features = %+v: want a bot user and the messages tab (for message.im)", m.Features)
	}
}

type slashCommand struct {
	Command      string `json:"command"`
	Description  string `json:"description"`
	UsageHint    string `json:"usage_hint"`
	ShouldEscape bool   `json:"should_escape"`
}

// manifest is the part of the manifest the tests look into.
type manifest struct {
	Features struct {
		AppHome struct {
			MessagesTabEnabled bool `json:"messages_tab_enabled"`
		} `json:"app_home"`
		BotUser struct {
			DisplayName string `json:"display_name"`
		} `json:"bot_user"`
		SlashCommands []slashCommand `json:"slash_commands"`
		AgentView     struct {
			AgentDescription string `json:"agent_description"`
			SuggestedPrompts []struct {
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"suggested_prompts"`
		} `json:"agent_view"`
	} `json:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `json:"bot"`
		} `json:"scopes"`
	} `json:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			BotEvents []string `json:"bot_events"`
		} `json:"event_subscriptions"`
		Interactivity struct {
			IsEnabled bool `json:"is_enabled"`
		} `json:"interactivity"`
		OrgDeployEnabled     bool `json:"org_deploy_enabled"`
		SocketModeEnabled    bool `json:"socket_mode_enabled"`
		TokenRotationEnabled bool `json:"token_rotation_enabled"`
	} `json:"settings"`
}

func parseManifest(yml string) (manifest, error) {
	var m manifest
	err := yaml.Unmarshal([]byte(yml), &m)
	return m, err
}

// knownBotScopes are Slack's bot-token scopes (https://api.slack.com/scopes), to catch typos.
var knownBotScopes = []string{
	"app_mentions:read", "assistant:write", "bookmarks:read", "bookmarks:write", "calls:read", "calls:write",
	"canvases:read", "canvases:write", "channels:history", "channels:join", "channels:manage", "channels:read",
	"channels:write.invites", "channels:write.topic", "chat:write", "chat:write.customize", "chat:write.public",
	"commands", "dnd:read", "emoji:read", "files:read", "files:write", "groups:history", "groups:read",
	"groups:write", "groups:write.invites", "groups:write.topic", "im:history", "im:read", "im:write",
	"im:write.topic", "incoming-webhook", "links:read", "links:write", "links.embed:write",
	"metadata.message:read", "mpim:history", "mpim:read", "mpim:write", "mpim:write.topic", "pins:read",
	"pins:write", "reactions:read", "reactions:write", "reminders:read", "reminders:write", "remote_files:read",
	"remote_files:share", "remote_files:write", "team:read", "usergroups:read", "usergroups:write",
	"users.profile:read", "users:read", "users:read.email", "users:write",
}

// knownBotEvents are the Events API types h9 could subscribe to, to catch typos.
var knownBotEvents = []string{
	"agent_session_stopped", "app_home_opened", "app_mention", "app_uninstalled", "member_joined_channel", "message.channels",
	"message.groups", "message.im", "message.mpim", "reaction_added", "reaction_removed", "tokens_revoked",
}
