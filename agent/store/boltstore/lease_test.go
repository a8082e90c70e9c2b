package boltstore

import (
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/agent/store"
)

// The only process holds every lease, each new hold with a greater token.
func TestLeasesAreAlwaysGranted(t *testing.T) {
	s, _ := openFile(t, filepath.Join(t.TempDir(), "h9.db"))
	k := store.LeaseKey{Channel: "C1", Thread: "1.1"}
	first, err := s.AcquireLease(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.AcquireLease(t.Context(), k)
	if err != nil || second.Token <= first.Token || !s.LeaseValid(first) || !s.LeaseValid(second) {
		t.Errorf("second hold %+v, %v after %+v", second, err, first)
	}
	if err := s.ReleaseLease(t.Context(), second); err != nil {
		t.Error(err)
	}
}
