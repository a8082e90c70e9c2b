package automation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a 5-field cron line in an IANA zone. robfig/cron parses it
// (its parser only: h9 fires from the store, ARCHITECTURE.md,
// "Automations"); the occurrences are computed here on the wall clock of
// the zone, so that each wall-clock time fires once however DST moves:
// a time the clocks skip fires at the instant Go gives it (an hour later),
// a time they repeat fires once, at the instant Go gives it.
type Schedule struct {
	spec *cron.SpecSchedule
	zone *time.Location
	// minutes are the times of day (minutes after midnight) it fires at,
	// ascending.
	minutes []int
}

// cronParser reads the five standard fields and nothing else: no seconds,
// no @every or @daily, no TZ= prefix (timezone: is the key for that).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// horizonDays is how far ahead the smallest gap is looked for: eight
// years hold every month boundary, every weekday on every date and two
// leap days, so every pattern of matching days a cron line can make.
const horizonDays = 8*365 + 2

// searchDays bounds Next's search (a line that matches no day, such as
// 30 February, has no next occurrence).
const searchDays = horizonDays

// maxDSTShift is more than any zone's clock change (Troll's is two hours).
const maxDSTShift = 3 * time.Hour

// ParseSchedule reads a cron line in zone and refuses one whose
// occurrences come closer than minInterval, or that never comes; from is
// where the search for the smallest gap starts.
func ParseSchedule(line string, zone *time.Location, minInterval time.Duration, from time.Time) (*Schedule, error) {
	if zone == nil {
		zone = time.UTC
	}
	if f := strings.Fields(line); len(f) != 5 || strings.HasPrefix(line, "@") || strings.Contains(line, "TZ=") {
		return nil, errors.New("a schedule is five fields: minute hour day-of-month month day-of-week (\"0 9 * * 1\")")
	}
	parsed, err := cronParser.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("not a cron line: %v", err)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, errors.New("not a cron line")
	}
	s := &Schedule{spec: spec, zone: zone}
	for h := range 24 {
		if spec.Hour&(1<<h) == 0 {
			continue
		}
		for m := range 60 {
			if spec.Minute&(1<<m) != 0 {
				s.minutes = append(s.minutes, h*60+m)
			}
		}
	}
	gap, ok := s.MinGap(from)
	switch {
	case !ok:
		return nil, errors.New("it never comes (no day matches it)")
	case gap < minInterval:
		return nil, fmt.Errorf("two of its occurrences are %s apart; H9_AUTOMATION_MIN_INTERVAL is %s", gap, minInterval)
	}
	return s, nil
}

// dayMatches is cron's rule: with either day field a star, both must
// match; with both restricted, either may.
func (s *Schedule) dayMatches(y int, m time.Month, d int) bool {
	if s.spec.Month&(1<<uint(m)) == 0 {
		return false
	}
	wd := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
	dom := s.spec.Dom&(1<<uint(d)) != 0
	dow := s.spec.Dow&(1<<uint(wd)) != 0
	if s.spec.Dom&(1<<63) != 0 || s.spec.Dow&(1<<63) != 0 {
		return dom && dow
	}
	return dom || dow
}

// Next is the first occurrence strictly after t (zero if none within
// eight years).
func (s *Schedule) Next(t time.Time) time.Time {
	local := t.In(s.zone)
	y, m, d := local.Date()
	day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC) // a civil date, walked in UTC
	for range searchDays {
		y, m, d := day.Date()
		if s.dayMatches(y, m, d) {
			for _, min := range s.minutes {
				at := time.Date(y, m, d, min/60, min%60, 0, 0, s.zone)
				if at.After(t) {
					return at
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// MinGap is the smallest time between two consecutive occurrences within
// horizonDays of from (a very long one when it occurs once); ok is false
// when it never occurs. It
// works on the wall clock from the fields' bits (no walk through every
// occurrence) and walks real occurrences only around the zone's clock
// changes, where they may come closer than on the wall clock.
func (s *Schedule) MinGap(from time.Time) (time.Duration, bool) {
	if len(s.minutes) == 0 {
		return 0, false
	}
	best := time.Duration(1<<63 - 1)
	for i := 1; i < len(s.minutes); i++ {
		best = min(best, time.Duration(s.minutes[i]-s.minutes[i-1])*time.Minute)
	}
	local := from.In(s.zone)
	y, m, d := local.Date()
	start := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	prev, days := -1, 0
	var changes []time.Time // days whose start in the zone has another offset than the day before's
	_, lastOff := time.Date(y, m, d, 0, 0, 0, 0, s.zone).Zone()
	for i := range horizonDays {
		day := start.AddDate(0, 0, i)
		dy, dm, dd := day.Date()
		if _, off := time.Date(dy, dm, dd, 0, 0, 0, 0, s.zone).Add(24 * time.Hour).Zone(); off != lastOff {
			changes = append(changes, time.Date(dy, dm, dd, 0, 0, 0, 0, s.zone))
			lastOff = off
		}
		if !s.dayMatches(dy, dm, dd) {
			continue
		}
		days++
		if prev >= 0 {
			wall := time.Duration((i-prev)*24*60-s.minutes[len(s.minutes)-1]+s.minutes[0]) * time.Minute
			best = min(best, wall)
		}
		prev = i
	}
	if days == 0 {
		return 0, false
	}
	if best > maxDSTShift+24*time.Hour {
		return best, true // no clock change brings two occurrences closer than a day
	}
	// Around each clock change, the real gaps.
	for _, c := range changes {
		t := c.Add(-26 * time.Hour)
		end := c.Add(50 * time.Hour)
		prevAt := s.Next(t)
		for n := 0; !prevAt.IsZero() && prevAt.Before(end) && n < 4*24*60; n++ {
			next := s.Next(prevAt)
			if next.IsZero() {
				break
			}
			best = min(best, next.Sub(prevAt))
			prevAt = next
		}
	}
	return best, true
}

// Missed is what an outage left of a schedule (ARCHITECTURE.md,
// "Automations"): the latest occurrence in (since, now] fires once if it
// is less than catchUpWindow old; every earlier one is skipped, and so is
// the latest when older.
type Missed struct {
	// Fire is the occurrence to fire now, zero for none.
	Fire time.Time
	// Skipped counts the occurrences skipped (at most maxCounted; More
	// says there were more).
	Skipped int
	More    bool
	// Latest is the latest occurrence at or before now (the new
	// watermark), zero when none came since.
	Latest time.Time
}

// catchUpWindow is how old the latest missed occurrence may be and still fire.
const catchUpWindow = 24 * time.Hour

// maxCounted bounds the count of skipped occurrences after a long outage.
const maxCounted = 10000

// Missed is what came in (since, now].
func (s *Schedule) Missed(since, now time.Time) Missed {
	var out Missed
	for t := s.Next(since); !t.IsZero() && !t.After(now); t = s.Next(t) {
		if !out.Latest.IsZero() {
			out.Skipped++
		}
		out.Latest = t
		if out.Skipped >= maxCounted {
			out.More = true
			// Jump close to now: the latest is then found without
			// counting every minute of a long outage.
			if later := now.Add(-catchUpWindow - time.Minute); later.After(t) {
				for u := s.Next(later); !u.IsZero() && !u.After(now); u = s.Next(u) {
					out.Latest = u
				}
			}
			break
		}
	}
	if !out.Latest.IsZero() && now.Sub(out.Latest) < catchUpWindow {
		out.Fire = out.Latest
	} else if !out.Latest.IsZero() {
		out.Skipped++
	}
	return out
}

// ScheduleKey is a schedule occurrence's key: its instant, in UTC.
func ScheduleKey(at time.Time) string { return "schedule:" + at.UTC().Format(time.RFC3339) }
