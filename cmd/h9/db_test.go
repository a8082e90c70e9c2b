package main

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenDBSecondOpenFailsFast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := openDB(dir, dbLockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// flock is per open file, so a second open in this process contends like a second h9 would.
	_, err = openDB(dir, 50*time.Millisecond)
	if !errors.Is(err, ErrDataDirLocked) {
		t.Fatalf("err = %v, want ErrDataDirLocked", err)
	}
	want := "another h9 is already using " + dir + " (h9.db is locked)"
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := openDB(dir, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	db2.Close()
}
