package forge

import (
	"fmt"
	"testing"
)

// reads is which of n polls read the checks of sha; found and pending are
// what each read finds.
func reads(c Cursor, sha string, n int, found, pending bool) []int {
	var out []int
	for i := range n {
		if c.readChecks(sha) {
			out = append(out, i)
			c.Seen["checked"] = sha
			c.flag("found", "checks", found)
			c.flag("pending", "checks", pending)
		}
	}
	return out
}

// The schedule of a head's checks (issue 31): a head with no check yet is
// read every poll, as is a head whose checks run; a settled head every
// settledEvery polls; a new head at once.
func TestChecksSchedule(t *testing.T) {
	t.Parallel()
	fresh := func() Cursor { return Cursor{}.clone() }

	if got := reads(fresh(), "a", 30, false, false); len(got) != 30 {
		t.Errorf("a head without checks was read %d times in 30 polls (%v); want every poll", len(got), got)
	}
	if got := reads(fresh(), "a", 30, true, false); fmt.Sprint(got) != "[0 9 19 29]" {
		t.Errorf("a settled head was read at %v; want the first poll and every %dth", got, settledEvery)
	}
	if got := reads(fresh(), "a", 30, true, true); len(got) != 30 {
		t.Errorf("a head whose checks run was read %d times in 30 polls; want every poll", len(got))
	}

	c := fresh()
	reads(c, "a", 30, true, false)
	if !c.readChecks("b") {
		t.Error("a new head was not read at once")
	}
}

// flag keeps each source's mark apart: one source settling leaves the
// other's, and the key goes when none has it.
func TestCursorFlag(t *testing.T) {
	t.Parallel()
	c := Cursor{}.clone()
	c.flag("pending", "checks", true)
	c.flag("pending", "statuses", true)
	c.flag("pending", "checks", false)
	if got := c.Seen["pending"]; got != "statuses" {
		t.Errorf("pending = %q; want statuses", got)
	}
	c.flag("pending", "statuses", false)
	if _, ok := c.Seen["pending"]; ok {
		t.Errorf("pending = %q after both settled; want no key", c.Seen["pending"])
	}
}
