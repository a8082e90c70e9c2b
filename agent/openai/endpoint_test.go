package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		base, chat string
		azure      bool
	}{
		{"https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions", false},
		{"https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions", false},
		{"http://localhost:11434/v1/chat/completions", "http://localhost:11434/v1/chat/completions", false},
		{"https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1/chat/completions", false},
		{"https://generativelanguage.googleapis.com/v1beta/openai/", "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", false},
		{"https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21",
			"https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", true},
		{"https://r.openai.azure.com/openai/deployments/gpt4o/?api-version=2024-10-21",
			"https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", true},
		{"https://r.openai.azure.com/openai/v1", "https://r.openai.azure.com/openai/v1/chat/completions", true},
		{"https://r.cognitiveservices.azure.com/openai/v1/", "https://r.cognitiveservices.azure.com/openai/v1/chat/completions", true},
		{"https://gw.example.com/openai/v1?api-version=preview", "https://gw.example.com/openai/v1/chat/completions?api-version=preview", true},
	}
	for _, tt := range tests {
		ep, err := parseEndpoint(tt.base)
		if err != nil || ep.chatURL != tt.chat || ep.azure != tt.azure {
			t.Errorf("parseEndpoint(%q) = %q azure %v, %v; want %q azure %v", tt.base, ep.chatURL, ep.azure, err, tt.chat, tt.azure)
		}
	}
}

func TestParseEndpointRefuses(t *testing.T) {
	for base, want := range map[string]string{
		"localhost:8080": "not an http(s) URL",
		"https://r.openai.azure.com/openai/deployments/gpt4o":          "without ?api-version",
		"https://r.openai.azure.com/openai/deployments/?api-version=1": "ends in /openai/deployments/<deployment>",
	} {
		if err := CheckBaseURL(base); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckBaseURL(%q) = %v, want %q", base, err, want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	for _, tt := range []struct {
		azure      bool
		key        string
		apiKey     string
		authHeader string
	}{
		{false, "sk", "", "Bearer sk"},
		{true, "k", "k", ""},
		{false, "", "", ""},
	} {
		h := http.Header{}
		endpoint{azure: tt.azure}.authorize(h, tt.key)
		if h.Get("api-key") != tt.apiKey || h.Get("Authorization") != tt.authHeader {
			t.Errorf("azure %v key %q: headers %v", tt.azure, tt.key, h)
		}
	}
}

// The models list is read from each URL form, as go-openai reads it
// (the fake serves the routes go-openai calls), and its errors are words.
func TestListModels(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithModels("a", "b"), fakemodel.WithAPIKey("k"))
	defer srv.Close()
	for _, base := range []string{srv.URL(), srv.AzureDeploymentURL("dep", "2024-10-21"), srv.AzureV1URL()} {
		m, err := New(Config{BaseURL: base, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := m.ListModels(context.Background())
		if err != nil || strings.Join(ids, ",") != "a,b" {
			t.Errorf("%s: models %v, %v", base, ids, err)
		}
	}
	m, _ := New(Config{BaseURL: srv.URL(), APIKey: "wrong-key"})
	_, err := m.ListModels(context.Background())
	if HTTPStatus(err) != http.StatusUnauthorized || strings.Contains(DescribeError(err), "wrong-key") {
		t.Errorf("wrong key: %v / %q", err, DescribeError(err))
	}
}
