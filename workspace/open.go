package workspace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens a file for reading without ever blocking on it: a FIFO,
// socket or device is refused before it is opened, and the opened file is
// checked again in case one was swapped in between. O_NONBLOCK makes the
// open itself return at once even then.
func openRegular(root *os.Root, rel, path string) (*os.File, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(fi, path); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkRegular(fi, path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkRegular(fi fs.FileInfo, path string) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("%w: %q is a directory; list it with bash (ls)", ErrIsDirectory, path)
	case !fi.Mode().IsRegular():
		return notRegular(fi, path)
	}
	return nil
}

func notRegular(fi fs.FileInfo, path string) error {
	kind := "special file"
	switch m := fi.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		kind = "FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%w: %q is a %s; file tools only read and write regular files", ErrNotRegular, path, kind)
}

// ReadRegularFile reads at most limit bytes of the regular file name under
// root. It never blocks on a FIFO or device: a pipe named AGENTS.md or
// SKILL.md in a workspace must not hang every run of the session.
func ReadRegularFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := openRegular(root, name, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, io.LimitReader(f, limit))
	return buf.Bytes(), err
}
