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
