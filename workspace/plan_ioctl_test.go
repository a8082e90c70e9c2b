package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
	"golang.org/x/sys/unix"
)

// fsIocGetversion is FS_IOC_GETVERSION: the inode's generation.
const fsIocGetversion = 0x80087601

// Plan mode under Landlock alone changes no inode's metadata through an
// ioctl on a read-only descriptor: ext4 answers FS_IOC_SETVERSION under
// two numbers ('v' 2 and its own 'f' 4). Each is first shown to work from
// the host on the same file, so the probe can fail.
func TestLandlockPlanModeChangesNoInodeMetadata(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	testenv.Need(t, "root", "landlock:1")
	t.Parallel()
	m := newManager(t, "none")
	w := openWS(t, m, "s")
	f := filepath.Join(w.Dir(), "f.txt")
	writeHostFile(t, f, "x\n")

	generation := func() int {
		t.Helper()
		fd, err := unix.Open(f, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		v, err := unix.IoctlGetUint32(fd, fsIocGetversion)
		if err != nil {
			t.Skipf("this filesystem keeps no inode generation (FS_IOC_GETVERSION: %v)", err)
		}
		return int(v)
	}
	setFromHost := func(nr uint, v int) error {
		fd, err := unix.Open(f, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.IoctlSetPointerInt(fd, nr, v)
	}
	for _, c := range []struct {
		name string
		nr   uint
	}{{"FS_IOC_SETVERSION", 0x40087602}, {"EXT4_IOC_SETVERSION", 0x40086604}} {
		t.Run(c.name, func(t *testing.T) {
			if err := setFromHost(c.nr, 1000); err != nil {
				t.Skipf("control: %s from the host: %v (not this filesystem's)", c.name, err)
			}
			if g := generation(); g != 1000 {
				t.Skipf("control: %s from the host left generation %d", c.name, g)
			}
			cmd := perlErrno(fmt.Sprintf(`($a = pack("q", 77)) && open(F, "<", "f.txt") && ioctl(F, 0x%x, $a)`, c.nr))
			r := mustRun(t, w, cmd, BashOptions{ReadOnly: true})
			if g := generation(); g != 1000 {
				t.Errorf("plan mode changed the inode generation to %d: %+v", g, r)
			}
			if !strings.Contains(r.Output, "ERR Operation not permitted") {
				t.Errorf("%s on a read-only descriptor in plan mode: %+v, want EPERM", c.name, r)
			}
		})
	}
}
