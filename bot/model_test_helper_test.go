package bot

import (
	"testing"

	"github.com/h9-app/h9/agent/openai"
)

// modelAt is the agent's model for a fake endpoint, streaming as h9 does
// by default.
func modelAt(t testing.TB, url string) *openai.Client {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: url, APIKey: "test-key", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
