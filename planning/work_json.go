package planning

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MarshalJSON writes the log exactly as encoding/json would from its field
// tags, by hand: the log is stored with every step of a run, and
// reflecting over its maps of evidence cost more than the rest of the work
// rule together. Decoding is encoding/json's own.
func (w WorkLog) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"since":`...)
	b = w.Since.appendJSON(b)
	if len(w.Working) > 0 {
		b = appendEvidenceMap(append(b, `,"working":`...), w.Working)
	}
	if len(w.Done) > 0 {
		b = appendEvidenceMap(append(b, `,"done":`...), w.Done)
	}
	return append(b, '}'), nil
}

// appendEvidenceMap writes m as an object, keys sorted as encoding/json
// sorts them; a nil entry is null.
func appendEvidenceMap(b []byte, m map[string]*Evidence) []byte {
	b = append(b, '{')
	for i, id := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, id), ':')
		if e := m[id]; e != nil {
			b = e.appendJSON(b)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

func (e *Evidence) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if len(e.Calls) > 0 {
		b = append(b, `"calls":[`...)
		for i, c := range e.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendJSON(b)
		}
		b = append(b, ']')
	}
	if e.Made != 0 {
		b = strconv.AppendInt(append(comma(b), `"made":`...), int64(e.Made), 10)
	}
	if e.Succeeded != 0 {
		b = strconv.AppendInt(append(comma(b), `"ok":`...), int64(e.Succeeded), 10)
	}
	if cp := e.Checkpoint; cp != nil {
		b = appendString(append(comma(b), `"checkpoint":{"commit":`...), cp.Commit)
		b = strconv.AppendInt(append(b, `,"added":`...), int64(cp.Added), 10)
		b = strconv.AppendInt(append(b, `,"deleted":`...), int64(cp.Deleted), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// comma separates a field from the one before it, if any.
func comma(b []byte) []byte {
	if b[len(b)-1] != '{' {
		return append(b, ',')
	}
	return b
}

func (r ToolRun) appendJSON(b []byte) []byte {
	b = appendString(append(b, `{"tool":`...), r.Tool)
	if r.Target != "" {
		b = appendString(append(b, `,"target":`...), r.Target)
	}
	if r.Failed {
		b = append(b, `,"failed":true`...)
	}
	if r.Exit != nil {
		b = strconv.AppendInt(append(b, `,"exit":`...), int64(*r.Exit), 10)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does: HTML characters, U+2028
// and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if esc := asciiEscape(c); esc != "" {
				b = append(append(b, s[start:i]...), esc...)
				i++
				start = i
				continue
			}
			if c < 0x20 || c == '<' || c == '>' || c == '&' {
				b = append(append(b, s[start:i]...), '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				i++
				start = i
				continue
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// asciiEscape is the short escape of an ASCII byte, "" when it has none.
func asciiEscape(c byte) string {
	switch c {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	}
	return ""
}
