package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFrom streams r into a new file at path, confined to the workspace
// like every file tool, creating parent directories. At most limit bytes
// are taken: a longer stream fails with ErrTooLarge and leaves nothing. The
// file appears whole or not at all (temporary file + rename); an existing
// file at path is replaced, a directory or special file is refused. It
// returns the bytes written. Memory stays at one copy buffer, whatever the
// size.
func (w *Workspace) WriteFrom(path string, r io.Reader, limit int64) (int64, error) {
	rel, err := w.rel(path)
	if err != nil {
		return 0, err
	}
	var n int64
	err = w.withRoot(func(root *os.Root) error {
		n, err = streamAtomic(root, rel, path, r, limit)
		return err
	})
	return n, w.fileErr(path, err)
}

func streamAtomic(root *os.Root, rel, path string, r io.Reader, limit int64) (int64, error) {
	if rel == "." {
		return 0, fmt.Errorf("%w: %q is the workspace directory itself", ErrIsDirectory, path)
	}
	switch fi, err := root.Lstat(rel); {
	case err == nil && fi.IsDir():
		return 0, fmt.Errorf("%w: %q is a directory", ErrIsDirectory, path)
	case err == nil && !fi.Mode().IsRegular():
		return 0, notRegular(fi, path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
	}
	tmp := filepath.Join(filepath.Dir(rel), ".h9-tmp-"+randomSuffix())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, werr := io.Copy(f, io.LimitReader(r, limit+1))
	if werr == nil && n > limit {
		werr = fmt.Errorf("%w: %q is larger than %d bytes", ErrTooLarge, path, limit)
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		root.Remove(tmp)
		return 0, err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return 0, err
	}
	return n, nil
}
