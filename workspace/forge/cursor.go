package forge

import "strconv"

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

// settledEvery is how often (in polls) the checks of a head whose checks
// have all finished are read again, for re-runs: a quiet GitHub pull
// request then costs 4 requests a poll instead of 6 (≤ 300 an hour at 60s).
const settledEvery = 10

// readChecks reports whether this poll reads the head's checks: always for
// a new head or while a check runs or a status is pending; once they have
// all finished, every settledEvery polls. It counts the poll.
func (c Cursor) readChecks(sha string) bool {
	if sha == "" {
		return false
	}
	polls, _ := strconv.Atoi(c.Seen["polls"])
	c.Seen["polls"] = strconv.Itoa(polls + 1)
	settled := c.Seen["checked"] == sha && c.Seen["pending"] == ""
	return !settled || (polls+1)%settledEvery == 0
}
