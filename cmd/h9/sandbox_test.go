package main

import "testing"

// Doctor reads what a container forbids from /proc: a seccomp filter, a
// mount over part of /proc (Docker's masked paths).
func TestContainerReadings(t *testing.T) {
	if !seccompFiltered("Name:\th9\nSeccomp:\t2\nSeccomp_filters:\t1\n") || seccompFiltered("Seccomp:\t0\n") {
		t.Error("seccompFiltered misreads /proc/self/status")
	}
	masked := "22 21 0:5 /null /proc/kcore rw,nosuid - devtmpfs udev rw\n"
	clean := "21 1 0:19 / /proc rw,nosuid - proc proc rw\n30 1 0:20 / /sys rw - sysfs sysfs rw\n"
	if !procMasked(masked) || procMasked(clean) {
		t.Error("procMasked misreads /proc/self/mountinfo")
	}
}
