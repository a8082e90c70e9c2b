package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile creates or replaces a file, creating parent directories. The
// new content appears atomically (temporary file + rename), so a failed
// write leaves the old file untouched.
func (w *Workspace) WriteFile(path, content string) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	err = w.withRoot(func(root *os.Root) error {
		return writeAtomic(root, rel, path, []byte(content))
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(content), path), nil
}

func writeAtomic(root *os.Root, rel, path string, data []byte) error {
	if rel == "." {
		return fmt.Errorf("%w: %q is the workspace directory itself", ErrIsDirectory, path)
	}
	perm := fs.FileMode(0o644)
	fi, err := root.Lstat(rel)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// Write through a link (os.Root refuses it if it leads outside) so
		// the link itself survives.
		return writeInPlace(root, rel, path, data)
	case err == nil && fi.IsDir():
		return fmt.Errorf("%w: %q is a directory", ErrIsDirectory, path)
	case err == nil && !fi.Mode().IsRegular():
		return notRegular(fi, path)
	case err == nil:
		perm = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := filepath.Join(filepath.Dir(rel), ".h9-tmp-"+randomSuffix())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

func writeInPlace(root *os.Root, rel, path string, data []byte) error {
	fi, err := root.Stat(rel)
	if err != nil {
		return err
	}
	if err := checkRegular(fi, path); err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO swapped in after the Stat fails (ENXIO) or is
	// caught below instead of blocking; O_TRUNC only once it is checked.
	f, err := root.OpenFile(rel, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkRegular(fi, path)
	}
	if err == nil {
		err = checkSingleLink(fi, path)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err != nil {
		f.Close()
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// checkSingleLink refuses to change a file in place that has other names:
// a hard link may be shared with h9's repository cache and every other
// checkout of it (see shared.go). Replacing a file (writeAtomic) never
// changes the inode, so only writes through a symlink need this.
func checkSingleLink(fi fs.FileInfo, path string) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%w: %q is a hard link shared with other files (such as the repository's borrowed objects); "+
			"write to the file itself rather than through a symlink to it", ErrSharedFile, path)
	}
	return nil
}

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
