package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// A repository checkout borrows its objects from h9's repository cache:
// the files in its .git/objects/pack are hard links to the cache's packs,
// so the same inodes are every other checkout's objects too. A write to one
// of them, through any path, would change them all. Under bwrap the
// sandbox therefore sees that directory read-only, and .git, .git/objects
// and .git/objects/pack are mount points, which cannot be renamed or
// removed: the shared files can never be moved out from under the
// read-only mount, so every command finds them where the first one did.
// (A hard link from elsewhere to a file under a mount is refused by the
// kernel across mounts.) The file tools, which run in h9 itself, refuse to
// write in place to a file with more than one link (writeInPlace).

// sharedPackDir is where a checkout's borrowed objects live.
var sharedPackDir = []string{".git", "objects", "pack"}

// sharedMounts are the directories a command must see as mount points,
// outermost first, opened without following a symlink; the last is
// mounted read-only.
type sharedMounts struct {
	dirs []*os.File
	dsts []string
}

func (s *sharedMounts) close() {
	if s == nil {
		return
	}
	for _, f := range s.dirs {
		f.Close()
	}
}

// findShared opens .git, .git/objects and .git/objects/pack under dir,
// refusing symlinks at every step, and returns them when the pack
// directory holds a file with more than one link (a borrowed object). A
// workspace without them, or whose objects are its own, needs nothing.
func findShared(dir string) (*sharedMounts, error) {
	parent, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(parent)
	s := &sharedMounts{}
	at, path := parent, dir
	for _, name := range sharedPackDir {
		fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			s.close()
			return nil, nil // not a checkout h9 made (or a symlink): nothing borrowed here
		}
		path = filepath.Join(path, name)
		s.dirs = append(s.dirs, os.NewFile(uintptr(fd), path))
		s.dsts = append(s.dsts, path)
		at = fd
	}
	shared, err := holdsLinkedFile(s.dirs[len(s.dirs)-1])
	if err != nil || !shared {
		s.close()
		return nil, err
	}
	return s, nil
}

// holdsLinkedFile reports whether d lists a regular file with more than one link.
func holdsLinkedFile(d *os.File) (bool, error) {
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		var st unix.Stat_t
		err := unix.Fstatat(int(d.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return false, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			return true, nil
		}
	}
	return false, nil
}

// sharedFD is the first descriptor number bwrap gets the shared
// directories on (3 and 4 are its info and block pipes).
const sharedFD = 5

// bwrapArgs binds the shared directories onto themselves, the pack
// directory read-only (and all of them read-only in plan mode).
func (s *sharedMounts) bwrapArgs(readOnly bool) []string {
	if s == nil {
		return nil
	}
	var a []string
	for i, dst := range s.dsts {
		flag := "--bind-fd"
		if readOnly || i == len(s.dsts)-1 {
			flag = "--ro-bind-fd"
		}
		a = append(a, flag, strconv.Itoa(sharedFD+i), dst)
	}
	return a
}

// files are what startBwrap passes on, in descriptor order from sharedFD.
func (s *sharedMounts) files() []*os.File {
	if s == nil {
		return nil
	}
	return s.dirs
}

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
