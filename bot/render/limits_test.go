package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func btn(actionID, label, value string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
}

func TestCheckLimits(t *testing.T) {
	t.Parallel()
	ok := section("ok", "fine")
	many := make([]slack.Block, MaxBlocks+1)
	for i := range many {
		many[i] = section("b"+strings.Repeat("x", i), "x")
	}
	var nilSection *slack.SectionBlock
	for _, tc := range []struct {
		name string
		m    Message
		want error // nil: must pass
	}{
		{"valid", Message{Text: "t", Blocks: blocks(ok)}, nil},
		{"valid at every limit", Message{Text: strings.Repeat("x", MaxMessageText), Blocks: blocks(
			section(strings.Repeat("i", MaxID), strings.Repeat("x", MaxSectionText)),
			slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("h", MaxHeaderText), false, false)),
			slack.NewActionBlock("a", btn(strings.Repeat("a", MaxID), strings.Repeat("l", MaxButtonText), strings.Repeat("v", MaxButtonValue))),
		)}, nil},
		{"50 blocks", Message{Text: "t", Blocks: many[:MaxBlocks]}, nil},
		{"51 blocks", Message{Text: "t", Blocks: many}, ErrTooManyBlocks},
		{"no text", Message{Blocks: blocks(ok)}, ErrEmptyText},
		{"message text", Message{Text: strings.Repeat("x", MaxMessageText+1)}, ErrTextTooLong},
		{"message text astral", Message{Text: strings.Repeat("😀", MaxMessageText/2+1)}, ErrTextTooLong},
		{"section text", Message{Text: "t", Blocks: blocks(section("s", strings.Repeat("x", MaxSectionText+1)))}, ErrTextTooLong},
		{"empty section", Message{Text: "t", Blocks: blocks(section("s", " \n"))}, ErrEmptyText},
		{"nil block", Message{Text: "t", Blocks: []slack.Block{nilSection}}, ErrEmptyText},
		{"field text", Message{Text: "t", Blocks: blocks(slack.NewSectionBlock(nil, []*slack.TextBlockObject{mrkdwn(strings.Repeat("x", MaxFieldText+1))}, nil))}, ErrTextTooLong},
		{"header", Message{Text: "t", Blocks: blocks(slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("h", MaxHeaderText+1), false, false)))}, ErrTextTooLong},
		{"context text", Message{Text: "t", Blocks: blocks(contextLine("c", strings.Repeat("x", MaxSectionText+1)))}, ErrTextTooLong},
		{"context empty", Message{Text: "t", Blocks: blocks(slack.NewContextBlock("c"))}, ErrTooManyElements},
		{"button text", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn("x", strings.Repeat("l", MaxButtonText+1), "")))}, ErrButtonTextTooLong},
		{"button no text", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn("x", "", "")))}, ErrEmptyText},
		{"action_id", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn(strings.Repeat("a", MaxID+1), "l", "")))}, ErrIDTooLong},
		{"action_id missing", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn("", "l", "")))}, ErrMissingID},
		{"block_id", Message{Text: "t", Blocks: blocks(section(strings.Repeat("i", MaxID+1), "x"))}, ErrIDTooLong},
		{"actions without block_id", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("", btn("x", "l", "")))}, ErrMissingID},
		{"button value", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn("x", "l", strings.Repeat("v", MaxButtonValue+1))))}, ErrValueTooLong},
		{"accessory value", Message{Text: "t", Blocks: blocks(slack.NewSectionBlock(mrkdwn("x"), nil,
			slack.NewAccessory(btn("x", "l", strings.Repeat("v", MaxButtonValue+1))), slack.SectionBlockOptionBlockID("s")))}, ErrValueTooLong},
		{"duplicate block_id", Message{Text: "t", Blocks: blocks(section("same", "a"), section("same", "b"))}, ErrDuplicateID},
		{"duplicate action_id", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a", btn("x", "l", ""), btn("x", "m", "")))}, ErrDuplicateID},
		{"empty actions", Message{Text: "t", Blocks: blocks(slack.NewActionBlock("a"))}, ErrTooManyElements},
		{"too many fields", Message{Text: "t", Blocks: blocks(slack.NewSectionBlock(nil, make11Fields(), nil))}, ErrTooManyElements},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLimits(tc.m)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckLimits = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("CheckLimits = %v, want %v", err, tc.want)
			}
		})
	}
}

func make11Fields() []*slack.TextBlockObject {
	fs := make([]*slack.TextBlockObject, MaxFields+1)
	for i := range fs {
		fs[i] = mrkdwn("f")
	}
	return fs
}

func TestCheckLimitsReportsEveryViolation(t *testing.T) {
	t.Parallel()
	m := Message{Blocks: blocks(section("s", strings.Repeat("x", MaxSectionText+1)),
		slack.NewActionBlock("", btn("x", strings.Repeat("l", MaxButtonText+1), "")))}
	err := CheckLimits(m)
	for _, want := range []error{ErrEmptyText, ErrTextTooLong, ErrMissingID, ErrButtonTextTooLong} {
		if !errors.Is(err, want) {
			t.Errorf("CheckLimits = %v, missing %v", err, want)
		}
	}
}
