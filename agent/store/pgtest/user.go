package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	osuser "os/user"
	"strconv"
	"syscall"
)

// account is who runs initdb and postgres: the caller, or nobody for root.
type account struct {
	root     bool
	uid, gid uint32
}

func serverUser() (account, error) {
	if os.Geteuid() != 0 {
		return account{}, nil
	}
	u, err := lookupUser(unprivileged)
	if err != nil {
		return account{}, fmt.Errorf("pgtest: running as root needs the user %q for the server: %w", unprivileged, err)
	}
	return u, nil
}

func lookupUser(name string) (account, error) {
	u, err := osuser.Lookup(name)
	if err != nil {
		return account{}, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return account{}, fmt.Errorf("user %s has a non-numeric uid or gid", name)
	}
	return account{root: true, uid: uint32(uid), gid: uint32(gid)}, nil
}

// own hands dir to the server's user; its parent (the temp dir) is
// world-traversable, which the server needs to reach it.
func (u account) own(dir string) error {
	if !u.root {
		return nil
	}
	if err := os.Chown(dir, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// apply makes cmd run as u (always in its own process group, so a ^C to
// the test does not reach the server before Stop does).
func (u account) apply(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if u.root {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, NoSetGroups: false}
		cmd.Env = append(os.Environ(), "HOME=/")
	}
}
