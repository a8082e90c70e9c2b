package gitrepo

import (
	"os"
	"strings"
	"testing"
)

// In the Landlock execution mode (no bwrap to bind the pack directory
// read-only) the borrowed packs are still out of a command's reach: it may
// remove or rename its own links, but neither write, truncate, chmod nor
// chown the shared files, so the cache and other sessions' checkouts stay
// intact, and the checkout's git still works.
func TestBorrowedObjectsCannotBeChangedUnderLandlock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the ownership protection needs h9 to run as root")
	}
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "landlock", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	other := f.prepare("r")
	ws := f.open(s)
	mirror := f.repos.mirrorDir(Repo{Name: "r"})
	before := packSums(t, mirror)
	for _, a := range []string{
		"chmod u+w .git/objects/pack/*.pack",
		"chown 0 .git/objects/pack/*.pack",
		"for p in .git/objects/pack/*.pack; do echo x >> $p; done",
		"for p in .git/objects/pack/*.pack; do : > $p; done",
		"for p in .git/objects/pack/*.pack; do truncate -s 0 $p; done",
		"for p in .git/objects/pack/*.idx; do perl -e 'open(F, \"+<\", $ARGV[0]) or die \"$!\"; print F \"x\"' $p; done",
	} {
		if res := f.bash(ws, a, false); res.ExitCode == 0 {
			t.Errorf("%q succeeded under Landlock:\n%s", a, res.String())
		}
	}
	if res := f.bash(ws, "git log --oneline | wc -l && echo z > z && git add z && git commit -qm z && echo committed", false); !strings.Contains(res.Output, "committed") {
		t.Errorf("git stopped working:\n%s", res.String())
	}
	if after := packSums(t, mirror); after != before {
		t.Errorf("the cache's packs changed:\n%s\n→\n%s", before, after)
	}
	if got := git(t, f.dir(other), "fsck", "--no-dangling"); got != "" {
		t.Errorf("another session's checkout is damaged: %s", got)
	}
}
