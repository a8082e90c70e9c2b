package workspace

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Landlock cannot make one directory of a writable workspace read-only, so
// in the Landlock execution mode the borrowed objects (shared.go) are
// protected by ownership instead: before each command h9, as root, gives
// every linked, already read-only file of the checkout's pack directory to
// borrowedOwner. The command runs as root without capabilities, so it may
// neither write such a file (no write bit, no CAP_DAC_OVERRIDE) nor chmod
// or chown it back (not its owner, no CAP_FOWNER); git reads it as before.
// An unprivileged h9 cannot do this (RELIABILITY.md says so).
const borrowedOwner = 65534 // nobody

// protectBorrowed hands dir's borrowed pack files to borrowedOwner.
func protectBorrowed(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	s, err := findShared(dir)
	if err != nil || s == nil {
		return err
	}
	defer s.close()
	pack := s.dirs[len(s.dirs)-1]
	if _, err := pack.Seek(0, 0); err != nil { // findShared read it to the end
		return err
	}
	names, err := pack.Readdirnames(-1)
	if err != nil {
		return err
	}
	fd := int(pack.Fd())
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 || st.Uid != 0 || st.Mode&0o222 != 0 {
			continue
		}
		err := unix.Fchownat(fd, n, borrowedOwner, int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	return nil
}
