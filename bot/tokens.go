package bot

import (
	"math"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// tokenRules is what the operator set about tokens: the budget each
// session starts with and each Raise budget adds, and the prices.
type tokenRules struct {
	budget            int     // 0: no budget
	priceIn, priceOut float64 // US dollars per million tokens
}

func (cfg Config) tokenRules() tokenRules {
	return tokenRules{budget: cfg.SessionTokenBudget, priceIn: cfg.PriceInput, priceOut: cfg.PriceOutput}
}

func validPrice(p float64) bool { return p >= 0 && !math.IsInf(p, 0) && !math.IsNaN(p) }

// spend is u as users see it, priced when the operator set prices.
func (r tokenRules) spend(u agent.Usage) render.Spend {
	s := render.Spend{Tokens: u.TotalTokens, Estimated: u.Estimated}
	if r.priceIn > 0 || r.priceOut > 0 {
		s.Priced = true
		s.Cost = (float64(u.PromptTokens)*r.priceIn + float64(u.CompletionTokens)*r.priceOut) / 1e6
	}
	return s
}

// latest is the newer of two totals of one session: the larger, since a
// total only grows.
func latest(a, b agent.Usage) agent.Usage {
	if a.TotalTokens >= b.TotalTokens {
		return a
	}
	return b
}

// budget is the session's token budget: the configured one and what each
// Raise budget added; 0 for none.
func (s *Session) budget() int {
	return s.baseBudget() * (1 + s.BudgetRaises)
}

// baseBudget is what the session starts with and each raise adds: its
// own (an automation's budget:) or the configured one; 0 for none.
func (s *Session) baseBudget() int {
	if s.Budget > 0 {
		return s.Budget
	}
	return max(s.rules.budget, 0)
}

// overBudget: the session's total is past its budget, so no run starts.
func (s *Session) overBudget() bool {
	b := s.budget()
	return b > 0 && s.Tokens.TotalTokens > b
}

// spend is the session's tokens as users see them.
func (s *Session) spend() render.Spend { return s.rules.spend(s.Tokens) }
