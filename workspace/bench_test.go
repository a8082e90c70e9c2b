package workspace

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkBashTrue is the fixed cost of one bash call, with and without
// the sandbox.
func BenchmarkBashTrue(b *testing.B) {
	for _, sb := range sandboxes {
		b.Run(sb, func(b *testing.B) {
			w := newWS(b, sb)
			ctx := context.Background()
			for b.Loop() {
				r, err := w.Bash(ctx, "true", BashOptions{})
				if err != nil || r.ExitCode != 0 {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
	}
}

// oneMiB is 1 MiB of 64-byte lines.
var oneMiB = strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<20/64)

func BenchmarkWriteFile1MiB(b *testing.B) {
	w := newWS(b, "none")
	b.SetBytes(int64(len(oneMiB)))
	for b.Loop() {
		if _, err := w.WriteFile("big.txt", oneMiB); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile1MiB reads the whole file (limit = all 16384 lines; the
// output cap still applies, the rest of the file is scanned for the count).
func BenchmarkReadFile1MiB(b *testing.B) {
	w := newWS(b, "none")
	if _, err := w.WriteFile("big.txt", oneMiB); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(oneMiB)))
	for b.Loop() {
		if _, err := w.ReadFile("big.txt", 0, 1<<20/64); err != nil {
			b.Fatal(err)
		}
	}
}
