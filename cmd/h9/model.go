package main

import (
	"context"
	"net/http"
	"slices"

	"github.com/h9-app/h9/agent/openai"
)

// checkModel looks for H9_MODEL in the endpoint's models list, then makes one tiny
// tool-calling round trip with it, as a run does (streaming or not, as configured): a
// server without a tool-call parser is the commonest set-up mistake, and a models list
// cannot show it.
func checkModel(ctx context.Context, cfg Config) finding {
	m, err := newModel(cfg, doctorCheckTimeout)
	if err != nil {
		return failed("see h9 -h for the URL forms", "%v", err)
	}
	ids, err := m.ListModels(ctx)
	listed := err == nil && slices.Contains(ids, cfg.Model)
	if err != nil && !listingUnsupported(err) {
		return failed(modelHint(err, cfg), "listing models failed: %s", openai.DescribeError(err))
	}
	probe, err := openai.ProbeTools(ctx, m, cfg.Model)
	switch {
	case err != nil:
		return failed(modelHint(err, cfg), "a tool-calling test with %s failed: %s", cfg.Model, openai.DescribeError(err))
	case probe.AsText:
		return failed(noParserHint, "%s wrote its tool call as text instead of calling the tool: the server parses no tool calls", cfg.Model)
	case !probe.Called:
		return warned("h9 needs a model that calls tools; try another H9_MODEL",
			"%s answered the tool-calling test without calling the tool", cfg.Model)
	case listed:
		return ok("%s lists model %s, and a tool-calling round trip with it works", cfg.OpenAIBaseURL, cfg.Model)
	}
	return ok("%s answered a tool-calling round trip with %s (not in its models list: an alias?)", cfg.OpenAIBaseURL, cfg.Model)
}

// noParserHint names the fix for the servers that need a flag to parse tool calls.
const noParserHint = "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser for the model>, " +
	"llama-server with --jinja; for Ollama pick a model tagged \"tools\""

// listingUnsupported: some OpenAI-compatible servers have no /models route.
func listingUnsupported(err error) bool {
	code := openai.HTTPStatus(err)
	return code == http.StatusNotFound || code == http.StatusMethodNotAllowed || code == http.StatusNotImplemented
}

func modelHint(err error, cfg Config) string {
	switch code := openai.HTTPStatus(err); {
	case openai.IsSetupError(err):
		return "restart the server with the fix above, then run h9 doctor again"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "check OPENAI_API_KEY for " + cfg.OpenAIBaseURL
	case code == http.StatusNotFound || code == http.StatusBadRequest:
		return "check H9_MODEL=" + cfg.Model + " is a chat model this endpoint serves"
	case code == http.StatusTooManyRequests || code == http.StatusPaymentRequired:
		return "the endpoint is rate limiting, or the account is out of quota or credit"
	case code >= 500:
		return "the endpoint is failing; try again later"
	case code == 0:
		return "cannot reach OPENAI_BASE_URL=" + cfg.OpenAIBaseURL + ": check the URL (it usually ends in /v1) and the network"
	}
	return "check OPENAI_BASE_URL, OPENAI_API_KEY and H9_MODEL"
}
