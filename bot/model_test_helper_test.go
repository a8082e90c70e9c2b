package bot

import (
	"testing"

	"github.com/h9-app/h9/agent"
)

// modelAt is the agent's model for a fake endpoint, streaming as h9 does
// by default.
func modelAt(t testing.TB, url string) *agent.OpenAIModel {
	t.Helper()
	m, err := agent.NewOpenAIModel(agent.ModelConfig{BaseURL: url, APIKey: "test-key", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
