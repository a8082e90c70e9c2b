package gitrepo

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/h9-app/h9/workspace/keyhint"
)

// yamlLineRE and the others pick the line and the problem out of one of the YAML
// decoder's messages ("line 3: field repo not found in type struct …").
var (
	yamlLineRE     = regexp.MustCompile(`line (\d+): (.*)`)
	yamlUnknownRE  = regexp.MustCompile(`^field (\S+) not found in type (\S+)`)
	yamlWrongKind  = regexp.MustCompile("^cannot unmarshal !!(\\w+) (?:`[^`]*` )?into (\\S+)")
	yamlKindInWord = map[string]string{"str": "text", "seq": "a list", "map": "a mapping", "int": "a number", "bool": "true/false", "float": "a number", "null": "nothing"}
)

// explainYAML rewrites the YAML decoder's error in a user's words, one
// problem per line number, with no Go types: "line 3: unknown key "repo"
// (known keys: name, url, …)".
func explainYAML(err error) string {
	var out []string
	for _, m := range yamlLineRE.FindAllStringSubmatch(err.Error(), -1) {
		out = append(out, "line "+m[1]+": "+explainYAMLProblem(strings.TrimSpace(m[2])))
	}
	if len(out) == 0 {
		return strings.TrimPrefix(strings.Join(strings.Fields(err.Error()), " "), "yaml: ")
	}
	return strings.Join(out, "; ")
}

func explainYAMLProblem(p string) string {
	if m := yamlUnknownRE.FindStringSubmatch(p); m != nil {
		return unknownKey(m[1], m[2] == "gitrepo.Repo")
	}
	if m := yamlWrongKind.FindStringSubmatch(p); m != nil {
		return yamlKindInWord[m[1]] + " where " + goKindInWords(m[2]) + " was expected"
	}
	return p // a syntax error: the decoder's words are already plain
}

// keySynonyms are words people write for a repository's keys.
var keySynonyms = map[string]string{"repo": "url", "repository": "url", "uri": "url", "remote": "url", "git": "url",
	"channel": "channels", "base": "branch", "ref": "branch"}

// unknownKey names the key meant, or lists the known ones. inEntry: the
// key is in an entry of repos: (else at the top of the file).
func unknownKey(key string, inEntry bool) string {
	if inEntry {
		return keyhint.Unknown(key, repoKeys(), keySynonyms)
	}
	return keyhint.Unknown(key, []string{"repos"}, nil)
}

// repoKeys are Repo's YAML keys, read from its tags so they stay in step.
func repoKeys() []string {
	t := reflect.TypeFor[Repo]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

func goKindInWords(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]gitrepo.Repo"):
		return "a list of repositories (- name: …)"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "string":
		return "text"
	case strings.HasPrefix(goType, "gitrepo.") || strings.HasPrefix(goType, "struct"):
		return "a mapping (key: value)"
	}
	return "another kind of value"
}
