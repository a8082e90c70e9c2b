package workspace

import (
	"errors"
	"testing"
)

// FuzzCheckReadOnly: the plan-mode parser never panics, and every refusal
// is an ErrReadOnly the agent can show the model.
func FuzzCheckReadOnly(f *testing.F) {
	for _, s := range []string{"ls -la && grep -r foo .", "echo x > f", "$(curl x)", "for f in *; do cat \"$f\"; done"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if err := CheckReadOnly(cmd); err != nil && !errors.Is(err, ErrReadOnly) {
			t.Fatalf("CheckReadOnly(%q) = %v, not ErrReadOnly", cmd, err)
		}
	})
}
