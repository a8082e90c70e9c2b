package workspace

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// Size is a number of bytes written in human units: 4GiB, 512MiB, 64KiB,
// 1G (= 1GiB) or plain bytes.
type Size int64

var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10},
	{"TB", 40}, {"GB", 30}, {"MB", 20}, {"KB", 10},
	{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10},
	{"B", 0},
}

// ParseSize reads a Size. Units are powers of 1024 whichever way they are
// spelled: a limit is about memory and pages, never about disk marketing.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	shift := uint(0)
	for _, u := range sizeUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, shift = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 63)
	if err != nil || n == 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%w: size %q (want a positive size such as 4GiB, 512MiB or 65536)", ErrInvalidArgument, s)
	}
	return Size(n << shift), nil
}

// UnmarshalText lets configuration libraries read a Size.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// String writes the size in the largest unit that divides it.
func (s Size) String() string {
	for _, u := range sizeUnits[:4] {
		if s >= 1<<u.shift && s%(1<<u.shift) == 0 {
			return strconv.FormatInt(int64(s>>u.shift), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// Limits bound one bash command. The kernel enforces them: memory and
// processes through a cgroup (when h9 may create one), the size of one
// written file through RLIMIT_FSIZE, /tmp through the size of its tmpfs.
type Limits struct {
	Memory   Size // H9_SANDBOX_MEMORY: all processes of the command together
	Pids     int  // H9_SANDBOX_PIDS: processes and threads at once
	FileSize Size // H9_SANDBOX_FILE_SIZE: largest file the command may write
	TmpSize  Size // H9_SANDBOX_TMP_SIZE: the private /tmp (and /dev/shm) under bwrap
}

// DefaultLimits apply to every field left zero.
var DefaultLimits = Limits{Memory: 4 << 30, Pids: 1024, FileSize: 1 << 30, TmpSize: 1 << 30}

func (l Limits) withDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = DefaultLimits.Memory
	}
	if l.Pids <= 0 {
		l.Pids = DefaultLimits.Pids
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultLimits.FileSize
	}
	if l.TmpSize <= 0 {
		l.TmpSize = DefaultLimits.TmpSize
	}
	return l
}

// diskNearlyFull is free space below which "No space left on device" is
// more likely the workspace's disk than the sandbox's /tmp.
const diskNearlyFull = 64 << 20

// limitNotes names the limits a command ran into, so that the model knows
// why it failed and by how much it went over. Memory and processes come
// from the cgroup's own counters; a file-size kill shows as SIGXFSZ (or
// EFBIG where that signal is ignored); a full /tmp as ENOSPC while the
// workspace's disk still has room.
func (s *sandbox) limitNotes(oc outcome, code int, output, dir string) []string {
	l := s.limits
	var notes []string
	if oc.memoryHit {
		notes = append(notes, fmt.Sprintf("memory limit reached: the kernel killed a process; "+
			"all processes of one command may use %s together (H9_SANDBOX_MEMORY)", l.Memory))
	}
	if oc.pidsHit {
		notes = append(notes, fmt.Sprintf("process limit reached: a fork failed; "+
			"one command may run %d processes and threads at once (H9_SANDBOX_PIDS)", l.Pids))
	}
	if code == 128+int(syscall.SIGXFSZ) || strings.Contains(output, "File size limit exceeded") || strings.Contains(output, "File too large") {
		notes = append(notes, fmt.Sprintf("file size limit reached: no file may grow past %s (H9_SANDBOX_FILE_SIZE)", l.FileSize))
	}
	if s.level == LevelBwrap && strings.Contains(output, "No space left on device") && !nearlyFull(dir) {
		notes = append(notes, fmt.Sprintf("/tmp may be full: the private /tmp and /dev/shm hold %s each (H9_SANDBOX_TMP_SIZE); "+
			"large files belong in the workspace", l.TmpSize))
	}
	return notes
}

func nearlyFull(dir string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) < diskNearlyFull
}
