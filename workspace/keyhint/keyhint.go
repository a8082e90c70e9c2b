// Package keyhint says what a person most likely meant when a file they
// wrote for h9 (the repositories file, the MCP file, an automations file)
// holds a key h9 does not know. Each of those files refuses unknown keys,
// since a misspelt key silently ignored is a setting silently lost; the
// refusal is only kind if it names the key that was meant.
package keyhint

import (
	"strings"
)

// closeEnough is the largest edit distance still offered as "did you
// mean": two edits catch a dropped, doubled or swapped letter without
// offering unrelated short keys.
const closeEnough = 2

// Unknown is the whole complaint about key: `unknown key "k" (did you mean
// "m"?)` when synonyms maps it (case-insensitively) to one of known, or when
// one of known is within two edits of it; otherwise it lists the keys
// allowed where it stands. A synonym that is not among known is not offered.
func Unknown(key string, known []string, synonyms map[string]string) string {
	if meant := Meant(key, known, synonyms); meant != "" {
		return `unknown key "` + key + `" (did you mean "` + meant + `"?)`
	}
	return `unknown key "` + key + `" (the keys here are ` + strings.Join(known, ", ") + ")"
}

// Meant is the known key that key most likely stands for, or "" when none
// is close. A synonym wins over spelling; among equally close spellings the
// first in known wins, so the answer is stable.
func Meant(key string, known []string, synonyms map[string]string) string {
	lower := strings.ToLower(key)
	if k, ok := synonyms[lower]; ok {
		for _, want := range known {
			if want == k {
				return k
			}
		}
	}
	best, bestDist := "", closeEnough+1
	for _, k := range known {
		if d := Distance(lower, strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// Distance is Levenshtein's edit distance between a and b, counted in
// bytes (keys are ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
