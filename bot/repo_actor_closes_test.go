package bot

import "testing"

// An issue trigger's session's request closes its issue: `Closes #N` is
// added to the body unless the body says it already.
func TestRequestBodyCloses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		n    int
		want string
	}{
		{"- [x] a\n\nSlack thread: x\n", 0, "- [x] a\n\nSlack thread: x\n"},
		{"- [x] a\n\nSlack thread: x\n", 12, "- [x] a\n\nSlack thread: x\n\nCloses #12\n"},
		{"- [x] Closes #12\n", 12, "- [x] Closes #12\n"},
		{"- [x] Closes #123\n", 12, "- [x] Closes #123\n\nCloses #12\n"},
	} {
		if got := withCloses(c.body, c.n); got != c.want {
			t.Errorf("withCloses(%q, %d) = %q, want %q", c.body, c.n, got, c.want)
		}
	}
}
