package render

import (
	"errors"
	"strings"
	"testing"
)

func TestButtonValueRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    ButtonValue
	}{
		{"session only", ButtonValue{SessionID: "T1-C2-1712345678.000100"}},
		{"revision", ButtonValue{SessionID: "s", Revision: 42}},
		{"step", ButtonValue{SessionID: "s", StepID: "call_abc|def"}},
		{"separators and unicode", ButtonValue{SessionID: "a|b%c d+é/✔", Revision: 1, StepID: "|||"}},
		{"longest ids", ButtonValue{SessionID: strings.Repeat("|", MaxValueID), Revision: 1 << 30, StepID: strings.Repeat("é", MaxValueID/2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.v.Encode()
			if s == "" || len(s) > MaxButtonValue {
				t.Fatalf("Encode = %d bytes, want 1..%d", len(s), MaxButtonValue)
			}
			got, err := DecodeButtonValue(s)
			if err != nil || got != tc.v {
				t.Fatalf("Decode(%q) = %+v, %v; want %+v", s, got, err, tc.v)
			}
		})
	}
}

func TestButtonValueEncodeInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    ButtonValue
	}{
		{"no session", ButtonValue{}},
		{"negative revision", ButtonValue{SessionID: "s", Revision: -1}},
		{"long session", ButtonValue{SessionID: strings.Repeat("x", MaxValueID+1)}},
		{"long step", ButtonValue{SessionID: "s", StepID: strings.Repeat("x", MaxValueID+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s := tc.v.Encode(); s != "" {
				t.Fatalf("Encode = %q, want \"\"", s)
			}
		})
	}
}

func TestDecodeButtonValueRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "garbage", "1", "1|0|s", "1|0|s|x|y", "2|0|s|", "1||s|", "1|x|s|", "1|-1|s|",
		"1|+1|s|", "1|01|s|", "1|0||", "1|0|%zz|", "1|0|%41|", "1|0|a b|", "1|99999999999999999999|s|",
		"1|0|s|" + strings.Repeat("x", MaxButtonValue),
	} {
		t.Run(s, func(t *testing.T) {
			if v, err := DecodeButtonValue(s); !errors.Is(err, ErrBadButtonValue) {
				t.Fatalf("Decode(%q) = %+v, %v; want ErrBadButtonValue", s, v, err)
			}
		})
	}
}
