package openai

import (
	"slices"
	"testing"
)

// Every failure kind has a name in Failures.
func TestFailureNamesAreClosed(t *testing.T) {
	kinds := Failures()
	for f := failOther; f <= failEmpty+1; f++ { // one past the last: "other"
		if n := f.metricName(); !slices.Contains(kinds, n) {
			t.Errorf("failure %d is named %q, not in %q", f, n, kinds)
		}
	}
	if failEmpty.metricName() == failOther.metricName() {
		t.Error("the last failure kind has no name of its own")
	}
}
