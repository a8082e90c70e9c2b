package slackapi

import (
	"fmt"
	"testing"
)

// The permalink cache stays bounded: the oldest links go first.
func TestPermalinkCacheIsBounded(t *testing.T) {
	c := newLinkCache(8)
	for i := range 20 {
		c.put(fmt.Sprint("C1/", i), fmt.Sprint("https://x/", i))
	}
	c.put("C1/19", "https://x/19") // again: no eviction
	if n := len(c.links); n != 8 {
		t.Errorf("%d links remembered, want 8", n)
	}
	if _, ok := c.get("C1/11"); ok {
		t.Error("an old link is still remembered")
	}
	for i := 12; i < 20; i++ {
		if link, ok := c.get(fmt.Sprint("C1/", i)); !ok || link != fmt.Sprint("https://x/", i) {
			t.Errorf("recent link %d = %q, %t", i, link, ok)
		}
	}
}
