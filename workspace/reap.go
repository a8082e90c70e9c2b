package workspace

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// killDescendants kills every process below this one and reaps them. As a
// child subreaper this process inherits every orphan of its tree, so when
// it has no children left it has no descendants left: nothing escapes by
// setsid or a double fork. Processes forked while it kills are caught in the
// next round, once their parents are dead and they are re-parented here.
func killDescendants() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR || pid > 0:
			continue
		case err != nil: // ECHILD: none left
			return
		}
		for _, p := range descendants(os.Getpid()) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if _, err := syscall.Wait4(-1, nil, 0, nil); err != nil && err != syscall.EINTR {
			return
		}
	}
}

// descendants lists the processes below root, from the parent links in
// /proc/<pid>/stat (this kernel may lack /proc/<pid>/task/<tid>/children).
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the fourth field of /proc/<pid>/stat; the second, the
// command name in parentheses, may itself contain spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
