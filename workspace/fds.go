package workspace

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sealInheritedFDs marks every descriptor of h9 from 3 up close-on-exec,
// so none reaches a command but the ones a start hands over on purpose
// (os/exec dups those into the child). Go opens its own files that way;
// this catches what h9 inherited without it, from a supervisor, a shell's
// redirect or socket activation: such a descriptor would let a command
// read a file its view hides. Only a flag changes, so it is safe while
// other goroutines use their files.
func sealInheritedFDs() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
