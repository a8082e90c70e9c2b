package main

import (
	"net/http/httptest"
	"testing"

	"github.com/h9-app/h9/agent/store"
)

// What a backend with leases reports is counted by change (a renewal of
// many leases counts each), and every change shows at zero before it
// happens; a change outside the set is "other". With metrics off the
// hooks are nil, not interfaces holding a nil pointer.
func TestLeaseChangesAreCounted(t *testing.T) {
	var off *promMetrics
	if off.forBot() != nil || off.forAgent() != nil {
		t.Fatal("metrics off must give nil hooks")
	}
	m := newPromMetrics()
	srv := httptest.NewServer(newHTTPHandler(m, &readiness{}, nil))
	defer srv.Close()
	for _, c := range store.LeaseChanges() {
		if v := scrapeURL(t, srv.URL+"/metrics").value("h9_lease_changes_total", "change", string(c)); v != 0 {
			t.Errorf("before any change, %s = %v, want 0", c, v)
		}
	}
	m.LeaseChanged(store.LeaseAcquired, 1)
	m.LeaseChanged(store.LeaseTakenOver, 1)
	m.LeaseChanged(store.LeaseTakenOver, 1)
	m.LeaseChanged(store.LeaseRenewed, 40)
	m.LeaseChanged(store.LeaseLost, 1)
	m.LeaseChanged("stolen", 1)
	got := scrapeURL(t, srv.URL+"/metrics")
	want := map[store.LeaseChange]float64{store.LeaseAcquired: 1, store.LeaseRenewed: 40, store.LeaseLost: 1,
		store.LeaseTakenOver: 2, store.LeaseReleased: 0, "other": 1}
	for c, n := range want {
		if v := got.value("h9_lease_changes_total", "change", string(c)); v != n {
			t.Errorf("h9_lease_changes_total{change=%q} = %v, want %v", c, v, n)
		}
	}
}
