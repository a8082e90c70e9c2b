package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// maxToolName is the model API's limit on a function name
// (^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// nameSep joins the server's name and the tool's: the built-in tools have
// no "__" in their names, so an MCP tool can never shadow one.
const nameSep = "__"

// exposedNames gives each of a server's tools its name for the model:
// <server>__<tool>, other characters made "_" (get.issue is
// srv__get_issue), cut to 64 with a hash of the tool's own name when too
// long or when two would collide. A tool whose name needs no change keeps
// it, whatever else the server lists; the result depends only on the set
// of names, not on the order the server listed them in.
func exposedNames(server string, tools []string) map[string]string {
	sorted := slices.Clone(tools)
	slices.Sort(sorted)
	out := make(map[string]string, len(sorted))
	taken := map[string]bool{}
	claim := func(t, name string) {
		for i := 0; taken[name]; i++ {
			name = hashed(server, t+strings.Repeat("#", i))
		}
		taken[name] = true
		out[t] = name
	}
	var changed []string
	for _, t := range sorted {
		if name := server + nameSep + t; len(name) <= maxToolName && safeChars(t) == t {
			claim(t, name)
		} else {
			changed = append(changed, t)
		}
	}
	for _, t := range changed {
		name := server + nameSep + safeChars(t)
		if len(name) > maxToolName {
			name = hashed(server, t)
		}
		claim(t, name)
	}
	return out
}

// hashed is a name the model API accepts for any tool name: a readable
// prefix and 8 hex digits of the tool's name.
func hashed(server, tool string) string {
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	prefix := server + nameSep + safeChars(tool)
	if room := maxToolName - len(suffix); len(prefix) > room {
		prefix = prefix[:room]
	}
	return prefix + suffix
}

func safeChars(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}
