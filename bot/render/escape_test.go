package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"<!channel>", "&lt;!channel&gt;"},
		{"<!here> hi", "&lt;!here&gt; hi"},
		{"<@U123>", "&lt;@U123&gt;"},
		{"<https://evil|click>", "&lt;https://evil|click&gt;"},
		{"&amp;", "&amp;amp;"},
		{"a & b > c", "a &amp; b &gt; c"},
		{"plain ✔", "plain ✔"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := Escape(tc.in)
			if got != tc.want {
				t.Fatalf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "<>") {
				t.Fatalf("Escape(%q) = %q keeps < or >", tc.in, got)
			}
			if back := unescape(got); back != tc.in {
				t.Fatalf("round trip %q → %q → %q", tc.in, got, back)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 5, "hello"},
		{"cut", "hello world", 6, "hello…"},
		{"zero", "hello", 0, ""},
		{"one", "hello", 1, "…"},
		{"multibyte", "✔✔✔✔", 3, "✔✔…"},
		{"astral counts two", "😀😀😀", 5, "😀😀…"},
		{"astral no split", "😀😀😀", 4, "😀…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in, tc.max)
			if got != tc.want {
				t.Fatalf("Truncate(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if !utf8.ValidString(got) || Len(got) > max(tc.max, 0) {
				t.Fatalf("Truncate(%q, %d) = %q: invalid or too long", tc.in, tc.max, got)
			}
		})
	}
}

func TestEscapeCutNeverSplitsEntities(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("a<&>", 100)
	for max := 0; max < 60; max++ {
		got := escapeCut(in, max)
		if Len(got) > max {
			t.Fatalf("escapeCut(_, %d) is %d long", max, Len(got))
		}
		trimmed := strings.TrimSuffix(got, ellipsis)
		if unescape(trimmed) != in[:len(unescape(trimmed))] {
			t.Fatalf("escapeCut(_, %d) = %q splits an entity", max, got)
		}
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"controls dropped", "a\x00b\x1bc\x7fd", "abcd"},
		{"crlf", "a\r\nb\rc", "a\nb\nc"},
		{"bidi override", "safe\u202etxt.exe", "safetxt.exe"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clean(tc.in); got != tc.want {
				t.Fatalf("clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCodeBlockCannotBeClosedEarly(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"```", "````", "``````", "x```<!channel>```y", strings.Repeat("`", 50)} {
		got := codeBlock(in, 200)
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "```\n"), "\n```")
		if strings.Contains(inner, "```") || strings.Contains(inner, "<") {
			t.Fatalf("codeBlock(%q) = %q", in, got)
		}
	}
}

func TestMention(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, want string }{
		{"U123ABC", "<@U123ABC>"},
		{"W0001", "<@W0001>"},
		{"", "someone"},
		{"U1>", "someone"},
		{"U12|x", "someone"},
		{"!channel", "someone"},
		{"u123", "someone"},
		{"U", "someone"},
		{"U1", "<@U1>"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if got := mention(tc.id); got != tc.want {
				t.Fatalf("mention(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}
