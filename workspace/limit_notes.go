package workspace

import (
	"fmt"
	"strings"
	"syscall"
)

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
