package openai

// Usage counts tokens: the endpoint's usage report, or h9's estimate for
// an answer that came without one.
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int
	// Estimated: some of these tokens are h9's estimate (bytes / 3), as
	// the endpoint reported no usage for them.
	Estimated bool `json:",omitempty"`
}

func (u *Usage) add(o Usage) { *u = u.Plus(o) }

// Plus is u and o together (a user's sessions, say).
func (u Usage) Plus(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		Estimated:        u.Estimated || o.Estimated,
	}
}
