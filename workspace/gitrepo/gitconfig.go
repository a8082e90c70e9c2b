package gitrepo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A session's start spawns as few git processes as it can (each costs
// milliseconds on a busy machine): configuration, refs and HEAD of the
// repositories h9 makes are files h9 writes itself.

// appendConfig adds "section.key" or "section.subsection.key" = value
// entries to a repository's config file, quoted as git reads them. Keys
// and values are h9's own (no newline can be in them: Check and the
// author's validation refuse one).
func appendConfig(gitDir string, entries [][2]string) error {
	var b strings.Builder
	for _, kv := range entries {
		key, value := kv[0], kv[1]
		if strings.ContainsAny(key+value, "\n\r\x00") {
			return fmt.Errorf("%w: a config entry with a line break: %q", ErrInvalidConfig, key)
		}
		first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
		if first <= 0 || last == len(key)-1 {
			return fmt.Errorf("%w: config key %q", ErrInvalidConfig, key)
		}
		section := "[" + key[:first] + "]"
		if first != last {
			section = "[" + key[:first] + " " + configQuote(key[first+1:last]) + "]"
		}
		fmt.Fprintf(&b, "%s\n\t%s = %s\n", section, key[last+1:], configQuote(value))
	}
	f, err := os.OpenFile(filepath.Join(gitDir, "config"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(b.String())
	return errors.Join(werr, f.Close())
}

// configQuote is a value (or subsection) in double quotes, \ and " escaped.
func configQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// ref is one reference of a repository: its full name and commit id.
type ref struct{ name, id string }

// listRefs is the repository's branches and tags, in ref order (one git
// for-each-ref, tags peeled to what they point at are not needed here).
func listRefs(out []byte) []ref {
	var refs []ref
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if id, name, ok := strings.Cut(sc.Text(), " "); ok && isCommitID(id) {
			refs = append(refs, ref{name: name, id: id})
		}
	}
	return refs
}

func findRef(refs []ref, name string) (string, bool) {
	for _, r := range refs {
		if r.name == name {
			return r.id, true
		}
	}
	return "", false
}

// writePackedRefs writes a repository's refs as one packed-refs file, in
// the byte order git wants.
func writePackedRefs(gitDir string, refs []ref) error {
	lines := make([]string, 0, len(refs))
	for _, r := range refs {
		lines = append(lines, r.id+" "+r.name)
	}
	sortRefs(lines)
	var b strings.Builder
	b.WriteString("# pack-refs with: sorted \n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return os.WriteFile(filepath.Join(gitDir, "packed-refs"), []byte(b.String()), 0o644)
}

// symbolicHead reads a repository's HEAD: the branch it names, if any.
func symbolicHead(gitDir string) string {
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: refs/heads/")
	if !ok || !ValidBranch(name) {
		return ""
	}
	return name
}

// writeHead points a repository's HEAD at a branch.
func writeHead(gitDir, branch string) error {
	return os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644)
}
