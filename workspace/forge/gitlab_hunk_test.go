package forge

import "testing"

// The hunk of a commented line ends at that line, on the new side for an
// added or kept line and on the old side for a removed one, with its
// hunk's header; a line in no hunk has none.
func TestHunkAt(t *testing.T) {
	diff := "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -20,2 +20,3 @@\n x\n+y\n z\n\\ No newline at end of file\n"
	for _, tc := range []struct {
		line int
		old  bool
		want string
	}{
		{2, false, "@@ -1,3 +1,3 @@\n a\n-b\n+B"},
		{2, true, "@@ -1,3 +1,3 @@\n a\n-b"},
		{3, false, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
		{21, false, "@@ -20,2 +20,3 @@\n x\n+y"},
		{22, false, "@@ -20,2 +20,3 @@\n x\n+y\n z"},
		{21, true, "@@ -20,2 +20,3 @@\n x\n+y\n z"},
		{10, false, ""},
	} {
		if got := hunkAt(diff, tc.line, tc.old); got != tc.want {
			t.Errorf("line %d (old %v): %q, want %q", tc.line, tc.old, got, tc.want)
		}
	}
}
