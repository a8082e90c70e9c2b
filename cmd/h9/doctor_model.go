package main

import (
	"context"
	"net/http"
	"slices"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent"
)

// checkModel lists the endpoint's models; when listing is unsupported, or the model is not
// listed (aliases on proxies), it asks for a tiny completion instead.
func checkModel(ctx context.Context, cfg Config) finding {
	client := agent.NewOpenAIModel(cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, &http.Client{Timeout: doctorCheckTimeout})

	list, err := client.ListModels(ctx)
	switch {
	case err == nil && listed(list, cfg.Model):
		return ok("%s lists model %s", cfg.OpenAIBaseURL, cfg.Model)
	case err != nil && !listingUnsupported(err):
		return failed(modelHint(err, cfg), "listing models failed: %v", err)
	}
	_, cerr := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    cfg.Model,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Reply with OK."}},
	})
	if cerr != nil {
		return failed(modelHint(cerr, cfg), "a test completion with %s failed: %v", cfg.Model, cerr)
	}
	return ok("%s answered a test completion with %s", cfg.OpenAIBaseURL, cfg.Model)
}

func listed(list openai.ModelsList, model string) bool {
	return slices.ContainsFunc(list.Models, func(m openai.Model) bool { return m.ID == model })
}

// listingUnsupported: some OpenAI-compatible servers have no /models route.
func listingUnsupported(err error) bool {
	code := agent.HTTPStatus(err)
	return code == http.StatusNotFound || code == http.StatusMethodNotAllowed || code == http.StatusNotImplemented
}

func modelHint(err error, cfg Config) string {
	switch code := agent.HTTPStatus(err); {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "check OPENAI_API_KEY for " + cfg.OpenAIBaseURL
	case code == http.StatusNotFound || code == http.StatusBadRequest:
		return "check H9_MODEL=" + cfg.Model + " is a chat model this endpoint serves"
	case code == http.StatusTooManyRequests:
		return "the endpoint is rate limiting or out of quota"
	case code >= 500:
		return "the endpoint is failing; try again later"
	case code == 0:
		return "cannot reach OPENAI_BASE_URL=" + cfg.OpenAIBaseURL + ": check the URL (it usually ends in /v1) and the network"
	}
	return "check OPENAI_BASE_URL, OPENAI_API_KEY and H9_MODEL"
}
