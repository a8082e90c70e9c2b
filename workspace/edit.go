package workspace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

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
