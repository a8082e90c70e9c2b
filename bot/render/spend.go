package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Spend is a session's tokens as shown to users, with their cost when the
// operator priced them (H9_PRICE_INPUT, H9_PRICE_OUTPUT).
type Spend struct {
	Tokens    int
	Estimated bool    // some of the count is h9's estimate: the endpoint reported no usage
	Cost      float64 // US dollars
	Priced    bool    // show Cost
}

// String is "12.3k tokens · $0.04" ("~12.3k tokens" when estimated), ""
// before the first token.
func (s Spend) String() string {
	if s.Tokens <= 0 {
		return ""
	}
	out := TokenCount(s.Tokens) + " tokens"
	if s.Tokens == 1 {
		out = "1 token"
	}
	if s.Estimated {
		out = "~" + out
	}
	if s.Priced {
		out += " · " + Dollars(s.Cost)
	}
	return out
}

// TokenCount is a count in a few characters: 850, 12.3k, 123k, 1.2M.
func TokenCount(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 99_950:
		return tenths((n+50)/100) + "k"
	case n < 999_500:
		return strconv.Itoa((n+500)/1000) + "k"
	case n < 99_950_000:
		return tenths((n+50_000)/100_000) + "M"
	}
	return strconv.Itoa((n+500_000)/1_000_000) + "M"
}

// tenths renders a count of tenths: 123 → "12.3", 120 → "12".
func tenths(n int) string {
	s := strconv.Itoa(n/10) + "." + strconv.Itoa(n%10)
	return strings.TrimSuffix(s, ".0")
}

// Dollars is a cost in US dollars to the cent: $0.04, $12.30; a cost
// under half a cent is "<$0.01", nothing at all "$0.00".
func Dollars(c float64) string {
	if c > 0 && c < 0.005 {
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", max(c, 0))
}

// spendSuffix is "  ·  12.3k tokens · $0.04" for a title line, or "".
func spendSuffix(s Spend) string {
	if t := s.String(); t != "" {
		return "  ·  " + t
	}
	return ""
}

// SpendBlockID marks the spend line a message carries (WithSpend).
const SpendBlockID = "h9_spend"

// WithSpend adds the session's tokens to an outcome message (Done,
// stalled, budget, a failure): a context line, and the same words at the
// end of its text. A message stays as it is before the first token.
func WithSpend(m Message, s Spend) Message {
	t := s.String()
	if t == "" {
		return m
	}
	m.Blocks = append(slices.Clip(m.Blocks), contextLine(SpendBlockID, "This session so far: "+t))
	m.Text = Truncate(m.Text, MaxMessageText-Len(t)-3) + " (" + t + ")"
	return m
}
