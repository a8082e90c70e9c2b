package workspace

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
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

// maxEditBytes bounds files that edit_file (and previews) load into memory.
const maxEditBytes = 10 << 20

// EditFile replaces old_string with new_string. Exactly one occurrence is
// required unless replaceAll, which replaces every one and reports the count.
func (w *Workspace) EditFile(path, oldString, newString string, replaceAll bool) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	var n int
	err = w.withRoot(func(root *os.Root) error {
		old, err := readText(root, rel, path)
		if err != nil {
			return err
		}
		updated, count, err := applyEdit(old, oldString, newString, replaceAll, path)
		if err != nil {
			return err
		}
		n = count
		return writeAtomic(root, rel, path, []byte(updated))
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	if n == 1 {
		return fmt.Sprintf("edited %s: replaced 1 occurrence", path), nil
	}
	return fmt.Sprintf("edited %s: replaced %d occurrences", path, n), nil
}

// applyEdit is the pure part of edit_file, shared with PreviewEdit.
func applyEdit(content, oldString, newString string, replaceAll bool, path string) (string, int, error) {
	if oldString == "" {
		return "", 0, fmt.Errorf("%w: old_string is empty; to create or overwrite %q use write_file", ErrInvalidArgument, path)
	}
	if oldString == newString {
		return "", 0, fmt.Errorf("%w: old_string and new_string are identical; nothing to change in %q", ErrInvalidArgument, path)
	}
	count := strings.Count(content, oldString)
	switch {
	case count == 0:
		return "", 0, fmt.Errorf("%w in %q: it must match the file exactly, including whitespace and indentation (read the file again)", ErrNoMatch, path)
	case count > 1 && !replaceAll:
		return "", 0, fmt.Errorf("%w: it occurs %d times in %q; include more surrounding lines to make it unique, or set replace_all to replace every occurrence", ErrMultipleMatches, count, path)
	case replaceAll:
		return strings.ReplaceAll(content, oldString, newString), count, nil
	default:
		return strings.Replace(content, oldString, newString, 1), 1, nil
	}
}

// readText loads a whole text file for editing.
func readText(root *os.Root, rel, path string) (string, error) {
	f, err := openRegular(root, rel, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxEditBytes {
		return "", fmt.Errorf("%w: %q is larger than %d MiB; edit it with bash tools instead", ErrTooLarge, path, maxEditBytes>>20)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return "", fmt.Errorf("%w: %q is not a text file and cannot be edited", ErrBinary, path)
	}
	return string(data), nil
}
