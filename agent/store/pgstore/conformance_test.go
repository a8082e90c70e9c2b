package pgstore

import (
	"context"
	"os"
	"testing"

	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/agent/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a Store on url, closed when the test ends.
func open(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The suite every backend passes, unchanged, on a real server: each test
// on a database of its own, reopened as a restart would.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Backend, storetest.Reopen) {
		url := pgtest.New(t)
		s := open(t, url, Options{})
		return s, func(t *testing.T) storetest.Backend {
			s.Close()
			s = open(t, url, Options{})
			return s
		}
	})
}
