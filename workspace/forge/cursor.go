package forge

import (
	"strconv"
	"strings"
)

// clone is a copy a poll may change and drop on failure.
func (c Cursor) clone() Cursor {
	out := Cursor{ETags: map[string]string{}, Seen: map[string]string{}}
	for k, v := range c.ETags {
		out.ETags[k] = v
	}
	for k, v := range c.Seen {
		out.Seen[k] = v
	}
	return out
}

// newer reports whether id is above the highest id seen under key, and
// raises the mark; forges number comments, notes and reviews upward.
func (c Cursor) newer(key string, id int64) bool {
	seen, _ := strconv.ParseInt(c.Seen[key], 10, 64)
	if id <= seen {
		return false
	}
	c.Seen[key] = strconv.FormatInt(id, 10)
	return true
}

// once reports whether key is new, and marks it seen.
func (c Cursor) once(key string) bool {
	if c.Seen[key] != "" {
		return false
	}
	c.Seen[key] = "1"
	return true
}

// flag records, under key, whether source (check runs, statuses) has its
// mark as of its last fresh read: "pending" holds the sources with work
// still running on the head, "found" those that have any check on it.
func (c Cursor) flag(key, source string, on bool) {
	var keep []string
	for _, s := range strings.Fields(c.Seen[key]) {
		if s != source {
			keep = append(keep, s)
		}
	}
	if on {
		keep = append(keep, source)
	}
	if len(keep) == 0 {
		delete(c.Seen, key)
		return
	}
	c.Seen[key] = strings.Join(keep, " ")
}

// settledEvery is how often (in polls) the checks of a settled head are
// read again, for re-runs: a quiet GitHub pull request then costs 4
// requests a poll instead of 6 (≤ 300 an hour at 60s).
const settledEvery = 10

// readChecks reports whether this poll reads the head's checks
// (ARCHITECTURE.md, "After the pull request"): always for a new head, while
// a check runs or a status is pending, and while the head has no check at
// all — CI registers its checks seconds or minutes after the push, so a
// head without any is not settled, or a failing build would reach the
// thread settledEvery polls late; a settled head (it has checks and all
// have finished) every settledEvery polls. It counts the poll.
func (c Cursor) readChecks(sha string) bool {
	if sha == "" {
		return false
	}
	polls, _ := strconv.Atoi(c.Seen["polls"])
	polls++
	c.Seen["polls"] = strconv.Itoa(polls)
	if c.Seen["checked"] != sha || c.Seen["pending"] != "" || c.Seen["found"] == "" {
		return true
	}
	return polls%settledEvery == 0
}
