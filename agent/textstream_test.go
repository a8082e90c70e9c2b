package agent

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
)

// answerTexts replays the text events of a run as a surface would: per
// answer, the pieces since its last retraction. It also counts the
// pieces and retractions heard.
func answerTexts(t *testing.T, events []Event) (texts map[int]string, pieces, retracted int) {
	t.Helper()
	texts = map[int]string{}
	last := 0
	for _, ev := range events {
		switch ev.Kind {
		case EventTextDelta:
			if ev.Answer < last {
				t.Errorf("a piece of answer %d after answer %d's", ev.Answer, last)
			}
			if ev.Text == "" {
				t.Error("an empty EventTextDelta")
			}
			last = ev.Answer
			texts[ev.Answer] += ev.Text
			pieces++
		case EventTextRetracted:
			texts[ev.Answer] = ""
			retracted++
		}
	}
	return texts, pieces, retracted
}

// longText is a few stream pieces of text, with multi-byte runes.
func longText(word string) string {
	return strings.Repeat(word+" — the build passes; ", 12)
}

// A streamed answer is given out piece by piece as the model writes it;
// when the stream breaks and the request is tried again, what was given
// out is retracted and the retry's text replaces it. The pieces of the
// final answer are exactly the run's final text.
func TestStreamedTextIsGivenOutAndRetractedOnRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first, final := longText("first try"), longText("second try")
	h.srv.Enqueue(
		fakemodel.Reply{Content: first, CutAfter: 3}, // three pieces arrive, then the connection closes
		fakemodel.Text(final),
	)
	res, rec := h.mustRun("s", "go")
	texts, pieces, retracted := answerTexts(t, rec.all())
	if retracted != 1 {
		t.Errorf("retractions = %d, want 1 (for the broken stream)", retracted)
	}
	wantPieces := 3 + len(streamPieces(final))
	if pieces != wantPieces {
		t.Errorf("pieces = %d, want %d (3 of the broken stream, then the retry's one by one)", pieces, wantPieces)
	}
	done := rec.of(EventDone)[0]
	if texts[done.Answer] != done.Text || done.Text != final || res.Text != final {
		t.Errorf("answer %d's pieces = %q\ndone = %q\nresult = %q\nwant %q", done.Answer, texts[done.Answer], done.Text, res.Text, final)
	}
	// The retraction comes after the broken stream's pieces and before the retry's.
	var order []EventKind
	for _, ev := range rec.all() {
		if ev.Kind == EventTextDelta || ev.Kind == EventTextRetracted {
			if len(order) == 0 || order[len(order)-1] != ev.Kind {
				order = append(order, ev.Kind)
			}
		}
	}
	if want := []EventKind{EventTextDelta, EventTextRetracted, EventTextDelta}; !slices.Equal(order, want) {
		t.Errorf("text events %v, want %v", order, want)
	}
}

// Each answer of a run has its number: the text before a tool call is
// its answer's, equal to EventText's; the final one's is EventDone's.
func TestTextPiecesBelongToTheirAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	interim := longText("looking")
	h.srv.Enqueue(
		fakemodel.Reply{Content: interim, Calls: []fakemodel.Call{fakemodel.C("bash", `{"command":"echo hi"}`)}},
		fakemodel.ToolCall("bash", `{"command":"true"}`), // no text at all
		fakemodel.Text("All done."),
	)
	_, rec := h.mustRun("s", "go")
	texts, _, retracted := answerTexts(t, rec.all())
	if retracted != 0 {
		t.Errorf("retractions = %d, want none", retracted)
	}
	said := rec.of(EventText)
	if len(said) != 1 || said[0].Answer != 1 || texts[1] != said[0].Text || said[0].Text != interim {
		t.Errorf("EventText %+v; answer 1's pieces %q", said, texts[1])
	}
	if _, ok := texts[2]; ok {
		t.Errorf("answer 2 (calls only) had text %q", texts[2])
	}
	done := rec.of(EventDone)[0]
	if done.Answer != 3 || texts[3] != "All done." || done.Text != "All done." {
		t.Errorf("done: answer %d %q; answer 3's pieces %q", done.Answer, done.Text, texts[3])
	}
}

// A plain (not streamed) answer gives out its whole text as one piece.
func TestPlainAnswerIsOnePiece(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plain, err := openai.New(openai.Config{BaseURL: h.srv.URL(), APIKey: "test-key", Stream: false})
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Model = plain
	h.reopen()
	final := longText("plain")
	h.srv.Enqueue(fakemodel.Text(final))
	_, rec := h.mustRun("s", "go")
	deltas := rec.of(EventTextDelta)
	if len(deltas) != 1 || deltas[0].Text != final || rec.of(EventDone)[0].Text != final {
		t.Errorf("deltas %d (%+v), want the whole text once", len(deltas), deltas)
	}
}

// A refusal is not text while it streams; the run's final text marks it,
// and the pieces end equal to that.
func TestRefusalIsGivenOutAsTheFinalText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.Reply{Refusal: "I can't help with that."})
	res, rec := h.mustRun("s", "go")
	texts, _, _ := answerTexts(t, rec.all())
	done := rec.of(EventDone)[0]
	if !strings.HasPrefix(res.Text, "The model refused") || texts[done.Answer] != res.Text {
		t.Errorf("pieces %q, final text %q", texts[done.Answer], res.Text)
	}
}

// When every try breaks, the run fails and no text of it stands.
func TestFailedStreamLeavesNoText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxRetries = 2 })
	h.srv.Enqueue(
		fakemodel.Reply{Content: longText("one"), CutAfter: 2},
		fakemodel.Reply{Content: longText("two"), CutAfter: 2},
	)
	_, rec, err := h.run("s", "go", RunOptions{})
	if !errors.Is(err, ErrModel) {
		t.Fatalf("err = %v, want ErrModel", err)
	}
	texts, pieces, retracted := answerTexts(t, rec.all())
	if pieces != 4 || retracted != 2 || texts[1] != "" {
		t.Errorf("pieces %d, retractions %d, answer 1's text %q; want 4, 2, none", pieces, retracted, texts[1])
	}
}

// streamPieces is how the fake model cuts text into stream chunks.
func streamPieces(s string) []string {
	const piece = 64 // fakemodel's streamPiece
	var out []string
	for len(s) > 0 {
		n := min(piece, len(s))
		for n < len(s) && s[n]&0xC0 == 0x80 {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
