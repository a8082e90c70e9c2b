// Package mcp offers the tools of a team's MCP servers to the agent
// (ARCHITECTURE.md, "MCP tools"): remote servers over Streamable HTTP,
// called by h9 itself with headers the sandbox never sees, and stdio
// servers started inside a session's sandbox like any command.
package mcp

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/h9-app/h9/workspace/keyhint"
	yaml "go.yaml.in/yaml/v2"
)

// ServerConfig is one entry of H9_MCP_FILE's servers list.
type ServerConfig struct {
	Name    string `yaml:"name"`
	URL     string `yaml:"url"`     // a Streamable HTTP endpoint h9 calls itself
	Command string `yaml:"command"` // a stdio server, started in the session's sandbox
	// HeadersEnv maps a header name to the environment variable holding its
	// value (remote servers only).
	HeadersEnv map[string]string `yaml:"headers_env"`
	Repos      []string          `yaml:"repos"`    // offered only in sessions of these repositories
	Channels   []string          `yaml:"channels"` // offered only in these channels (IDs)
	Tools      []string          `yaml:"tools"`    // an allow list of the server's tool names
}

// Remote reports whether the server is reached over HTTP.
func (c ServerConfig) Remote() bool { return c.URL != "" }

// Kind is the metrics label of the server: remote or stdio.
func (c ServerConfig) Kind() string {
	if c.Remote() {
		return kindRemote
	}
	return kindStdio
}

const (
	kindRemote = "remote"
	kindStdio  = "stdio"
)

type fileConfig struct {
	Servers []ServerConfig `yaml:"servers"`
}

// Server is a checked entry with its header values, read from the
// environment once at start.
type Server struct {
	ServerConfig
	Headers map[string]string // header name → value
}

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// LoadFile reads and checks H9_MCP_FILE. Errors are one line naming the
// setting and the server; getenv reads the header variables.
func LoadFile(path string, getenv func(string) (string, bool)) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("H9_MCP_FILE: cannot read %s: %v", path, err)
	}
	return Parse(data, getenv)
}

// Parse checks the YAML of an MCP file.
func Parse(data []byte, getenv func(string) (string, bool)) ([]Server, error) {
	var f fileConfig
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("H9_MCP_FILE: not a valid servers file: %s", explainYAML(err))
	}
	seen := map[string]bool{}
	out := make([]Server, 0, len(f.Servers))
	for i, c := range f.Servers {
		c.Name = strings.TrimSpace(c.Name)
		if err := check(c, seen); err != nil {
			return nil, fmt.Errorf("H9_MCP_FILE: server %d%s: %v", i+1, quotedName(c.Name), err)
		}
		seen[strings.ToLower(c.Name)] = true
		s := Server{ServerConfig: c, Headers: map[string]string{}}
		for header, env := range c.HeadersEnv {
			v, ok := getenv(env)
			if !ok || v == "" {
				return nil, fmt.Errorf("H9_MCP_FILE: server %q: headers_env %s names %s, which is not set", c.Name, header, env)
			}
			s.Headers[header] = v
		}
		out = append(out, s)
	}
	return out, nil
}

func quotedName(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", name)
}

// check is one entry's rules, in a user's words.
func check(c ServerConfig, seen map[string]bool) error {
	switch {
	case c.Name == "":
		return fmt.Errorf("name is missing")
	case !serverNameRE.MatchString(c.Name) || strings.Contains(c.Name, "__") || strings.HasSuffix(c.Name, "_"):
		// <server>__<tool> then splits at its first "__" one way only, so
		// two servers' tools never get the same name (names.go).
		return fmt.Errorf("name may have only letters, digits, _ and - (no \"__\", not ending in _), at most 32 of them")
	case seen[strings.ToLower(c.Name)]:
		return fmt.Errorf("name is used by an earlier server")
	case (c.URL == "") == (strings.TrimSpace(c.Command) == ""):
		return fmt.Errorf("set exactly one of url and command")
	case c.Command != "" && len(c.HeadersEnv) > 0:
		return fmt.Errorf("headers_env is for url servers only: a command runs in the sandbox, which gets no secrets")
	case strings.ContainsRune(c.Command, 0):
		return fmt.Errorf("command contains a NUL byte")
	}
	if c.URL != "" {
		if err := checkURL(c.URL); err != nil {
			return err
		}
	}
	for header, env := range c.HeadersEnv {
		if !headerNameRE.MatchString(header) {
			return fmt.Errorf("headers_env: %q is not a header name", header)
		}
		if !envNameRE.MatchString(env) {
			return fmt.Errorf("headers_env %s: %q is not an environment variable name", header, env)
		}
	}
	for key, list := range map[string][]string{"repos": c.Repos, "channels": c.Channels, "tools": c.Tools} {
		for _, v := range list {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("%s has an empty entry", key)
			}
		}
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url must be an http:// or https:// address (got %q)", raw)
	}
	if u.User != nil {
		return fmt.Errorf("url must not carry a password: put the token in headers_env")
	}
	return nil
}

// SecretNames lists the variables named by headers_env in the file at
// path, for h9 to hide from its environment image before anything else
// runs. A file that does not parse gives none: the start-up check that
// follows reports it.
func SecretNames(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var f fileConfig
	if yaml.Unmarshal(data, &f) != nil {
		return nil
	}
	var names []string
	for _, s := range f.Servers {
		for _, env := range s.HeadersEnv {
			if envNameRE.MatchString(env) {
				names = append(names, env)
			}
		}
	}
	return names
}

// headerOf is the canonical form of a configured header, as sent.
func headerOf(name string) string { return http.CanonicalHeaderKey(name) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// The YAML decoder's words for an unknown key and a value of the wrong
// kind, which name Go types ("field comand not found in type
// mcp.ServerConfig", "cannot unmarshal !!seq into mcp.fileConfig").
var (
	yamlUnknownRE   = regexp.MustCompile(`field (\S+) not found in type \S+`)
	yamlWrongKindRE = regexp.MustCompile("cannot unmarshal !!(\\w+) (?:`[^`]*` )?into (\\S+)")
	yamlKindWords   = map[string]string{"str": "text", "seq": "a list", "map": "a mapping", "int": "a number",
		"bool": "true/false", "float": "a number", "null": "nothing"}
)

// explainYAML says the decoder's error in a user's words, without Go
// types: an unknown key with the one meant, a value of the wrong kind
// with the kind expected.
func explainYAML(err error) string {
	msg := oneLine(strings.TrimPrefix(err.Error(), "yaml: "))
	msg = yamlUnknownRE.ReplaceAllStringFunc(msg, func(m string) string {
		return unknownKey(yamlUnknownRE.FindStringSubmatch(m)[1])
	})
	return yamlWrongKindRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlWrongKindRE.FindStringSubmatch(m)
		want := "a mapping (key: value)"
		switch {
		case sub[2] == "mcp.fileConfig":
			want = "a mapping with servers: (a list of servers: - name: …)"
		case strings.HasPrefix(sub[2], "[]mcp."):
			want = "a list of servers (- name: …)"
		case strings.HasPrefix(sub[2], "[]"):
			want = "a list"
		case sub[2] == "string":
			want = "text"
		}
		return yamlKindWords[sub[1]] + " where " + want + " was expected"
	})
}

// unknownKey names the key meant when one is close, else lists them.
func unknownKey(key string) string {
	keys := []string{"servers"}
	t := reflect.TypeFor[ServerConfig]()
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("yaml"))
	}
	return keyhint.Unknown(key, keys, nil)
}
