package openai

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// endpoint is where chat completions go and how the key travels.
type endpoint struct {
	chatURL string
	// azure sends the key as the api-key header instead of a bearer token.
	azure bool
	// base, apiVersion and deployment configure go-openai for the models list.
	base, apiVersion, deployment string
}

// azureHosts are the domains of Azure OpenAI and Azure AI Foundry resources.
var azureHosts = []string{".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"}

const (
	chatSuffix     = "/chat/completions"
	azureDeployDir = "/openai/deployments/"
)

// CheckBaseURL reports what is wrong with an OPENAI_BASE_URL, nil if it
// can be used.
func CheckBaseURL(base string) error {
	_, err := parseEndpoint(base)
	return err
}

// parseEndpoint reads a base URL: any OpenAI-compatible ".../v1" (query
// kept), an Azure deployment URL, whose api-version stays in the query
// (".../openai/deployments/D?api-version=V" → ".../openai/deployments/D/chat/completions?api-version=V"),
// or Azure's ".../openai/v1". A pasted ".../chat/completions" is accepted too.
func parseEndpoint(base string) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return endpoint{}, fmt.Errorf("%q is not an http(s) URL", base)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), chatSuffix)
	u.RawPath, u.Fragment = "", ""
	ep := endpoint{apiVersion: u.Query().Get("api-version")}
	prefix, deployment, isDeployment := strings.Cut(u.Path+"/", azureDeployDir)
	if isDeployment {
		deployment = strings.Trim(deployment, "/")
		if deployment == "" || strings.Contains(deployment, "/") {
			return endpoint{}, fmt.Errorf("%q: an Azure deployment URL ends in /openai/deployments/<deployment>", base)
		}
		if ep.apiVersion == "" {
			return endpoint{}, fmt.Errorf("%q is an Azure deployment URL without ?api-version=… (e.g. ?api-version=2024-10-21)", base)
		}
		ep.deployment, ep.base = deployment, u.Scheme+"://"+u.Host+prefix
	}
	ep.azure = isDeployment || ep.apiVersion != "" || azureHost(u.Hostname())
	chat := *u
	chat.Path += chatSuffix
	ep.chatURL = chat.String()
	if !isDeployment {
		noQuery := *u
		noQuery.RawQuery = ""
		ep.base = noQuery.String()
	}
	return ep, nil
}

func azureHost(host string) bool {
	host = strings.ToLower(host)
	for _, h := range azureHosts {
		if strings.HasSuffix(host, h) {
			return true
		}
	}
	return false
}

// authorize sets the key's header: api-key for Azure, a bearer token
// elsewhere, nothing when there is no key.
func (ep endpoint) authorize(h http.Header, key string) {
	switch {
	case key == "":
	case ep.azure:
		h.Set("api-key", key)
	default:
		h.Set("Authorization", "Bearer "+key)
	}
}

// goOpenAIConfig is a go-openai configuration for the same endpoint, used
// for the models list.
func (ep endpoint) goOpenAIConfig(key string, client *http.Client) goopenai.ClientConfig {
	cfg := goopenai.DefaultConfig(key)
	if ep.deployment != "" {
		cfg = goopenai.DefaultAzureConfig(key, ep.base)
		cfg.APIVersion = ep.apiVersion
		dep := ep.deployment
		cfg.AzureModelMapperFunc = func(string) string { return dep }
	} else {
		cfg.BaseURL = ep.base
		cfg.APIVersion = ep.apiVersion
	}
	cfg.HTTPClient = client
	return cfg
}
