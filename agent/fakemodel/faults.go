package fakemodel

import "net/http"

// Error answers as real endpoints send them. Each is a Reply with a
// Status and the provider's own body.

// InsufficientQuota is OpenAI's 429 for an account out of quota: retrying
// cannot help.
func InsufficientQuota() Reply {
	return Reply{Status: http.StatusTooManyRequests, RawBody: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}
}

// NoCredits is OpenRouter's 402 for an account without credit.
func NoCredits() Reply {
	return Reply{Status: http.StatusPaymentRequired, RawBody: `{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}`}
}

// LlamaCppNeedsJinja is llama-server's 500 for a request with tools when
// it was started without --jinja.
func LlamaCppNeedsJinja() Reply {
	return Reply{Status: http.StatusInternalServerError, RawBody: `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`}
}

// VLLMNeedsToolParser is vLLM's 400 for a request with tools when it was
// started without --enable-auto-tool-choice (vLLM's top-level error shape).
func VLLMNeedsToolParser() Reply {
	return Reply{Status: http.StatusBadRequest, RawBody: `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`}
}

// GeminiError is Gemini's OpenAI-compatible error: a JSON array.
func GeminiError(status int, state, msg string) Reply {
	return Reply{Status: status, RawBody: geminiBody(status, state, msg)}
}

// ToolParser names a server whose tool-call parser is off (WithoutToolParser).
type ToolParser int

const (
	// LlamaCpp: llama-server without --jinja (500).
	LlamaCpp ToolParser = iota + 1
	// VLLM: vLLM without --enable-auto-tool-choice (400).
	VLLM
)

func (p ToolParser) fault() Reply {
	if p == VLLM {
		return VLLMNeedsToolParser()
	}
	return LlamaCppNeedsJinja()
}
