package main

import (
	"errors"
	"net"
	"testing"
)

// Off, free and taken: doctor says which, and a taken address fails with
// the fix.
func TestDoctorHTTPAddr(t *testing.T) {
	doctorEnv(t)
	lines, err := doctorLines(t)
	if err != nil {
		t.Fatalf("doctor failed: %v", err)
	}
	wantMark(t, lines, "health and metrics", "✓", "off", "H9_HTTP_ADDR")

	t.Setenv("H9_HTTP_ADDR", "127.0.0.1:0")
	lines, err = doctorLines(t)
	if err != nil {
		t.Fatalf("doctor failed: %v", err)
	}
	wantMark(t, lines, "health and metrics", "✓", "127.0.0.1:0 is free", "/metrics")

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	t.Setenv("H9_HTTP_ADDR", taken.Addr().String())
	lines, err = doctorLines(t)
	if !errors.Is(err, ErrDoctorFailed) {
		t.Fatalf("err = %v, want ErrDoctorFailed", err)
	}
	wantMark(t, lines, "health and metrics", "✗", "cannot listen on "+taken.Addr().String(), "address already in use", "hint: choose a free address")
}
