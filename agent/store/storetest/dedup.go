package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// settingCases: channel settings (e.g. a channel's default repository).
var settingCases = []testCase{
	{"SettingsPerChannelAndKey", testSettings},
	{"SettingsSurviveReopen", testSettingsSurviveReopen},
	{"InstructionsSettingKeptExactly", testInstructionsSetting},
}

// dedupCases: what the bot relies on to handle each Slack event once.
var dedupCases = []testCase{
	{"DedupClaimReportsFreshKeys", testClaimFresh},
	{"DedupClaimsSurviveReopen", testClaimsSurviveReopen},
	{"DedupClaimsExpireAfterTTL", testClaimsExpire},
	{"DedupClaimsStayBounded", testClaimsBounded},
}

func testSettings(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	get := func(channel, key string) string {
		t.Helper()
		v, err := b.ChannelSetting(ctx, channel, key)
		must(t, err)
		return v
	}
	if v := get("C1", "repo"); v != "" {
		t.Errorf("unset setting = %q, want empty", v)
	}
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "backend"))
	must(t, b.SetChannelSetting(ctx, "C10", "repo", "web"))
	must(t, b.SetChannelSetting(ctx, "C1", "repository", "other"))
	for _, c := range [][3]string{{"C1", "repo", "backend"}, {"C10", "repo", "web"}, {"C1", "repository", "other"}, {"C", "repo", ""}, {"C1", "rep", ""}} {
		if v := get(c[0], c[1]); v != c[2] {
			t.Errorf("%s %s = %q, want %q", c[0], c[1], v, c[2])
		}
	}
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "none")) // a value like any other
	if v := get("C1", "repo"); v != "none" {
		t.Errorf("overwritten setting = %q, want none", v)
	}
	must(t, b.SetChannelSetting(ctx, "C1", "repo", ""))
	if v := get("C1", "repo"); v != "" {
		t.Errorf("removed setting = %q, want empty", v)
	}
	if err := b.SetChannelSetting(ctx, "", "repo", "x"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("setting without a channel: err = %v, want ErrInvalid", err)
	}
}

func testSettingsSurviveReopen(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	must(t, b.SetChannelSetting(t.Context(), "C1", "repo", "backend"))
	b = reopen(t)
	if v, err := b.ChannelSetting(t.Context(), "C1", "repo"); err != nil || v != "backend" {
		t.Errorf("setting after reopen = %q, %v", v, err)
	}
}

func claim(t *testing.T, b Backend, when time.Time, keys ...string) []bool {
	t.Helper()
	fresh, err := b.Claim(t.Context(), keys, when)
	must(t, err)
	if len(fresh) != len(keys) {
		t.Fatalf("Claim of %d keys answered %d", len(keys), len(fresh))
	}
	return fresh
}

func testClaimFresh(t *testing.T, fresh Fresh) {
	b := open(t, fresh)
	if got := claim(t, b, at(0), "env:1", "ev:1", "env:1"); !slices.Equal(got, []bool{true, true, false}) {
		t.Errorf("first claim = %v, want new, new, and the repeat seen", got)
	}
	if got := claim(t, b, at(time.Second), "ev:1", "msg:C1/1.1", "env:1"); !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("second claim = %v, want seen, new, seen", got)
	}
	if got := claim(t, b, at(2*time.Second)); len(got) != 0 {
		t.Errorf("claim of no keys = %v", got)
	}
	keys, err := b.Claimed(t.Context(), time.Time{})
	must(t, err)
	if want := []string{"env:1", "ev:1", "msg:C1/1.1"}; !sameKeys(keys, want) {
		t.Errorf("Claimed = %v, want %v", keys, want)
	}
}

func sameKeys(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

func testClaimsSurviveReopen(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	claim(t, b, at(0), "ev:1", "env:2")
	b = reopen(t)
	if got := claim(t, b, at(time.Minute), "ev:1", "env:2", "ev:3"); !slices.Equal(got, []bool{false, false, true}) {
		t.Errorf("claims after reopen = %v, want seen, seen, new", got)
	}
	keys, err := b.Claimed(t.Context(), at(30*time.Second))
	must(t, err)
	if !slices.Equal(keys, []string{"ev:3"}) {
		t.Errorf("Claimed since 30s = %v, want only ev:3", keys)
	}
}

func testClaimsExpire(t *testing.T, fresh Fresh) {
	b := open(t, fresh)
	claim(t, b, at(0), "ev:old")
	if got := claim(t, b, at(store.DedupTTL-time.Second), "ev:old"); got[0] {
		t.Error("a key claimed within the TTL claimed as new")
	}
	if got := claim(t, b, at(store.DedupTTL+time.Second), "ev:old"); !got[0] {
		t.Error("a key claimed more than the TTL ago is still seen")
	}
	if got := claim(t, b, at(store.DedupTTL+2*time.Second), "ev:old"); got[0] {
		t.Error("a key claimed anew after expiry is not seen")
	}
}

// More claims than the limit: the backend keeps the most recent
// DedupLimit (those still claim as seen) and stays within about 10 % more.
func testClaimsBounded(t *testing.T, fresh Fresh) {
	b := open(t, fresh)
	const batch = 1000
	total := store.DedupLimit + store.DedupLimit/4
	var all []string
	for i := 0; i < total; i += batch {
		keys := make([]string, batch)
		for j := range keys {
			keys[j] = fmt.Sprint("ev:", i+j)
		}
		claim(t, b, at(time.Duration(i)*time.Millisecond), keys...)
		all = append(all, keys...)
	}
	kept, err := b.Claimed(t.Context(), time.Time{})
	must(t, err)
	if n := len(kept); n < store.DedupLimit || n > store.DedupLimit+store.DedupLimit/10 {
		t.Errorf("%d claims kept of %d, want between %d and %d", n, total, store.DedupLimit, store.DedupLimit+store.DedupLimit/10)
	}
	recent := all[len(all)-store.DedupLimit:]
	for i, f := range claim(t, b, at(time.Hour), recent...) {
		if f {
			t.Fatalf("recent key %s was forgotten", recent[i])
		}
	}
}
