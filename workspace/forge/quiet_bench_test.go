package forge_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// quietHour polls a followed request that sees no activity for an hour
// at H9_FORGE_POLL=60s (60 polls after a first one that read a comment)
// b.N times, and reports per hour the API requests, the share answered
// 304 (free of the rate limit where the forge has conditional requests),
// the rest (which the rate limit counts) and the process's CPU per 100 such requests followed as a share of one
// core — client and fake together in this process, so an upper bound of
// h9's own.
func quietHour(b *testing.B, c forge.Client, number int, sha string) {
	ctx := context.Background()
	var requests, cached int
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		_, cur, err := c.Poll(ctx, number, sha, forge.Cursor{})
		if err != nil {
			b.Fatal(err)
		}
		requests, cached = 0, 0
		start := cpuTime()
		for range 60 {
			up, next, err := c.Poll(ctx, number, sha, cur)
			if err != nil {
				b.Fatal(err)
			}
			cur, requests, cached = next, requests+up.Requests, cached+up.Cached
		}
		cpu += cpuTime() - start
	}
	perPoll := cpu / time.Duration(b.N*60)
	b.ReportMetric(float64(requests), "requests/hour")
	b.ReportMetric(100*float64(cached)/float64(requests), "%304")
	b.ReportMetric(float64(requests-cached), "counted/hour") // what costs rate limit
	// 100 requests polled once a minute: 100 polls' CPU per 60 s.
	b.ReportMetric(100*100*perPoll.Seconds()/60, "%core/100-followed")
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
