package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"
)

const (
	// DefaultReadLimit is the number of lines read_file shows when no limit is given.
	DefaultReadLimit = 2000
	// MaxReadChars caps read_file's output; the rest is left for a later call.
	// It stays under the agent's 30 000-byte cap on a tool result, so a page
	// reaches the model whole and its "offset=N" note skips nothing.
	MaxReadChars = 28_000
	// maxLineChars cuts very long lines (minified files) so one line cannot eat the cap.
	maxLineChars = 2000
	// sniffLen is how much of a file decides whether it is text.
	sniffLen = 8192
)

// ReadFile returns lines of a text file, numbered like `cat -n`. offset is the
// 1-based first line (0 = start), limit the number of lines (0 = default).
// When not everything fits, a note says how to read on.
func (w *Workspace) ReadFile(path string, offset, limit int) (string, error) {
	if offset < 0 || limit < 0 {
		return "", fmt.Errorf("%w: reading %q: offset and limit must not be negative (got offset=%d, limit=%d)", ErrInvalidArgument, path, offset, limit)
	}
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLimit
	}
	var out string
	err = w.withRoot(func(root *os.Root) error {
		f, err := openRegular(root, rel, path)
		if err != nil {
			return err
		}
		defer f.Close()
		out, err = readLines(f, path, offset, limit)
		return err
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return scrubSecrets(out, w.sandbox.secrets), nil // a file setup wrote (an .npmrc) may hold one
}

func readLines(f *os.File, path string, offset, limit int) (string, error) {
	r := bufio.NewReaderSize(f, 64<<10)
	head, err := r.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return "", err // a read error, not an empty file
	}
	if len(head) == 0 {
		return fmt.Sprintf("%s is empty (0 bytes)", path), nil
	}
	if isBinary(head) {
		return "", fmt.Errorf("%w: %q is not a text file; read_file shows text only (use bash, e.g. `file` or `xxd | head`)", ErrBinary, path)
	}
	var b strings.Builder
	n, last := 0, 0 // lines seen, last line shown
	capped := false
	for {
		line, long, err := nextLine(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		n++
		if n < offset || capped || n >= offset+limit {
			continue
		}
		entry := fmt.Sprintf("%6d\t%s", n, line)
		if long {
			entry += " … [line cut]"
		}
		if b.Len()+len(entry)+1 > MaxReadChars && last > 0 {
			capped = true
			continue
		}
		b.WriteString(entry)
		b.WriteByte('\n')
		last = n
	}
	if n < offset {
		return "", fmt.Errorf("%w: offset %d is past the end of %q, which has %d lines", ErrInvalidArgument, offset, path, n)
	}
	if last < n {
		fmt.Fprintf(&b, "[showing lines %d-%d of %d; call read_file with offset=%d to read more]\n", offset, last, n, last+1)
	}
	return b.String(), nil
}

// nextLine returns the next line without its newline, cut to maxLineChars.
func nextLine(r *bufio.Reader) (line string, long bool, err error) {
	var buf []byte
	total := 0
	for {
		chunk, err := r.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		total += len(chunk)
		if room := maxLineChars - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && total == 0 {
			return "", false, io.EOF
		}
		if err != nil && err != io.EOF {
			return "", false, err
		}
		break
	}
	if total > maxLineChars {
		return string(trimToRune(buf)), true, nil
	}
	return string(bytes.TrimSuffix(buf, []byte("\r"))), false, nil
}

// isBinary: NUL bytes or invalid UTF-8 (allowing a rune cut by the sniff window).
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	return !utf8.Valid(trimToRune(head))
}

// trimToRune drops an incomplete UTF-8 sequence at the end of b.
func trimToRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

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
