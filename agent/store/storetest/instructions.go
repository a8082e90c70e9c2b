package storetest

import (
	"strings"
	"testing"
)

// testInstructionsSetting: a channel's instructions (/h9 instructions) are
// a setting of up to 4,000 characters of any text — several lines, quotes,
// non-ASCII (4,000 characters of it are up to 16,000 bytes) — kept exactly,
// per channel, beside the channel's other settings, across a reopen, and
// gone when cleared.
func testInstructionsSetting(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	long := strings.Repeat("Ñ🚫 \"never\" touch migrations;\n", 4000/29) // 4,000 characters at most, multi-byte
	must(t, b.SetChannelSetting(ctx, "C1", "instructions", long))
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "backend"))
	must(t, b.SetChannelSetting(ctx, "C2", "instructions", "payments service: ask before any schema change"))
	b = reopen(t)
	for _, c := range [][3]string{{"C1", "instructions", long}, {"C1", "repo", "backend"}, {"C2", "instructions", "payments service: ask before any schema change"}} {
		v, err := b.ChannelSetting(ctx, c[0], c[1])
		must(t, err)
		if v != c[2] {
			t.Errorf("%s %s = %d bytes, want %d bytes exactly as set", c[0], c[1], len(v), len(c[2]))
		}
	}
	must(t, b.SetChannelSetting(ctx, "C1", "instructions", ""))
	if v, err := b.ChannelSetting(ctx, "C1", "instructions"); err != nil || v != "" {
		t.Errorf("cleared instructions = %q, %v; want none", v, err)
	}
	if v, err := b.ChannelSetting(ctx, "C1", "repo"); err != nil || v != "backend" {
		t.Errorf("clearing the instructions changed the repo setting: %q, %v", v, err)
	}
}
