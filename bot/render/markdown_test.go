package render

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

func TestMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"bold", "a **b c** d", "a *b c* d"},
		{"underscores", "__x__", "_x_"},
		{"heading", "## Plan ##", "*Plan*"},
		{"heading with bold", "# **Plan**", "*Plan*"},
		{"link", "see [the docs](https://go.dev/doc?a=1&b=2)", "see <https://go.dev/doc?a=1&amp;b=2|the docs>"},
		{"link text bold", "[**x**](http://e.com)", "<http://e.com|*x*>"},
		{"not http", "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"pipe in text", "[a|b](https://e.com)", "[a|b](https://e.com)"},
		{"mention escaped", "<!channel> <@U1> **<!here>**", "&lt;!channel&gt; &lt;@U1&gt; *&lt;!here&gt;*"},
		{"inline code kept", "run `**x** <y>` now", "run `**x** &lt;y&gt;` now"},
		{"fence kept", "```go\n# not a heading\n**x** <z>\n```\n# Heading", "```\n# not a heading\n**x** &lt;z&gt;\n```\n*Heading*"},
		{"lone backtick", "a ` **b**", "a ` *b*"},
		{"link in url text", "[<@U1>](https://e.com)", "<https://e.com|&lt;@U1&gt;>"},
		{"plain", "nothing & more", "nothing &amp; more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Markdown(tc.in); got != tc.want {
				t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMarkdownCut(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("[link](https://example.com/a&b) **bold** <!here> ", 200)
	for _, max := range []int{0, 1, 10, 57, 300, 3000} {
		out := markdownCut(in, max)
		if Len(out) > max {
			t.Errorf("markdownCut(%d) = %d units", max, Len(out))
		}
		checkMrkdwnSafe(t, out)
	}
}

// checkMrkdwnSafe fails when s could ping, mention or link to anything but
// an http(s) URL, or holds a bare "&".
func checkMrkdwnSafe(t *testing.T, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			rest := s[i:]
			end := strings.IndexByte(rest, '>')
			if !strings.HasPrefix(rest, "<http://") && !strings.HasPrefix(rest, "<https://") || end < 0 ||
				strings.ContainsAny(rest[1:end], "<\n") {
				t.Fatalf("unsafe '<' at %d in %q", i, s)
			}
		case '&':
			rest := s[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				t.Fatalf("bare '&' at %d in %q", i, s)
			}
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{
		"# Plan\n**bold** __it__ [docs](https://go.dev)\n```\n<!channel>\n```",
		"<!channel> <@U123> <#C1|x> <https://evil|click> &amp;",
		"[a](https://x.y/<!here>) [b](http://a|b) [c](https://ok)>",
		"`<!here>` ``` `x` ```",
		"**[x](https://e.com)** __<@U1>__",
	} {
		f.Add(s, uint16(3000))
	}
	f.Fuzz(func(t *testing.T, s string, max uint16) {
		checkMrkdwnSafe(t, Markdown(s))
		out := markdownCut(s, int(max%4000))
		if Len(out) > int(max%4000) {
			t.Fatalf("markdownCut over its limit: %d > %d", Len(out), max%4000)
		}
		checkMrkdwnSafe(t, out)
	})
}

// The plan summary and the done message show the model's Markdown as mrkdwn.
func TestSummaryAndDoneUseMarkdown(t *testing.T) {
	t.Parallel()
	p := planning.Progress{Completed: 2, Total: 2}
	for name, m := range map[string]Message{
		"summary": RenderPlanSummary("## Plan\n**first** [docs](https://go.dev) <!channel>"),
		"review":  RenderPlanSummary("## Plan\n**first** [docs](https://go.dev) <!channel>"),
		"done":    RenderDone("## Plan\n**first** [docs](https://go.dev) <!channel>", p),
	} {
		mustFit(t, m)
		got := allText(m)
		for _, want := range []string{"*Plan*", "*first*", "<https://go.dev|docs>", "&lt;!channel&gt;"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q: %s", name, want, got)
			}
		}
	}
}
