package automation

import (
	"strings"
	"testing"
	"time"
)

func mustSchedule(t *testing.T, line string, zone *time.Location, min time.Duration) *Schedule {
	t.Helper()
	s, err := ParseSchedule(line, zone, min, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScheduleRefusesTooOften(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		line string
		min  time.Duration
		ok   bool
	}{
		{"* * * * * *", time.Minute, false}, // every second: six fields
		{"@every 1s", time.Minute, false},
		{"* * * * *", time.Hour, false},
		{"* * * * *", time.Minute, true},
		{"*/30 * * * *", time.Hour, false},
		{"0,59 9 * * *", time.Hour, false},     // 59 minutes apart on the same hour
		{"59 8 * * *", time.Hour, true},        // once a day
		{"0 23,0 * * *", 2 * time.Hour, false}, // 23:00 then 00:00: an hour apart across midnight
		{"0 0 * * *", 24 * time.Hour, true},
		{"0 9 * * 1", 24 * time.Hour, true},
		{"0 9 * * 1,2", 48 * time.Hour, false}, // Monday to Tuesday
		{"TZ=UTC 0 9 * * *", time.Minute, false},
	} {
		_, err := ParseSchedule(c.line, time.UTC, c.min, from)
		if (err == nil) != c.ok {
			t.Errorf("%q min %s: err %v, want ok=%v", c.line, c.min, err, c.ok)
		}
	}
}

// Around a clock change the real gap can be smaller than on the wall
// clock: 01:00 and 03:00 in Paris are two hours apart, but an hour apart
// on the day the clocks jump from 02:00 to 03:00.
func TestScheduleMinGapAcrossDST(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no zoneinfo")
	}
	s := mustSchedule(t, "0 1,3 * * *", paris, time.Minute)
	gap, ok := s.MinGap(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if !ok || gap > time.Hour {
		t.Errorf("gap %s, want at most 1h (the spring change)", gap)
	}
	if _, err := ParseSchedule("0 1,3 * * *", paris, 90*time.Minute, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Error("a schedule an hour apart at the spring change passed a 90m minimum")
	}
}

func TestScheduleNextInZone(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zoneinfo")
	}
	s := mustSchedule(t, "0 9 * * 1-5", ny, time.Hour)
	// Friday 2026-01-09 15:00 UTC = 10:00 in New York: next is Monday 9:00.
	got := s.Next(time.Date(2026, 1, 9, 15, 0, 0, 0, time.UTC))
	if want := time.Date(2026, 1, 12, 14, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next %s, want %s", got, want)
	}
	if k := ScheduleKey(got.In(ny)); k != "schedule:2026-01-12T14:00:00Z" {
		t.Errorf("key %q", k)
	}
}

func TestMissedFiresLatestOnce(t *testing.T) {
	t.Parallel()
	s := mustSchedule(t, "0 * * * *", time.UTC, time.Hour)
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 1, 1, 5, 30, 0, 0, time.UTC) // 01..05 missed
	m := s.Missed(since, now)
	if want := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC); !m.Fire.Equal(want) || !m.Latest.Equal(want) {
		t.Errorf("fire %s latest %s, want %s", m.Fire, m.Latest, want)
	}
	if m.Skipped != 4 {
		t.Errorf("skipped %d, want 4", m.Skipped)
	}
	// Nothing due: nothing fires.
	if m := s.Missed(now, now.Add(10*time.Minute)); !m.Fire.IsZero() || m.Skipped != 0 {
		t.Errorf("%+v", m)
	}
	// The latest older than 24 h: skipped too.
	d := mustSchedule(t, "0 9 1 * *", time.UTC, time.Hour)
	m = d.Missed(since, time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))
	if !m.Fire.IsZero() || m.Skipped != 1 {
		t.Errorf("old missed occurrence: %+v", m)
	}
	// A year's outage of an every-minute schedule ends quickly.
	e := mustSchedule(t, "* * * * *", time.UTC, time.Minute)
	start := time.Now()
	m = e.Missed(since, since.AddDate(1, 0, 0))
	if !m.More || m.Fire.IsZero() || time.Since(start) > 10*time.Second {
		t.Errorf("long outage: %+v in %s", m, time.Since(start))
	}
}

func TestScheduleErrorsSayWhy(t *testing.T) {
	t.Parallel()
	_, err := ParseSchedule("61 * * * *", time.UTC, time.Minute, time.Now())
	if err == nil || !strings.Contains(err.Error(), "not a cron line") {
		t.Errorf("got %v", err)
	}
}
