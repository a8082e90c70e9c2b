package fakemodel

import (
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// TextOnly is how a text-only endpoint refuses a request with image
// parts, in the words of the real ones; the zero value takes images.
type TextOnly int

const (
	// TakesImages: image parts are accepted (and recorded, see Requests).
	TakesImages TextOnly = iota
	// TextOnlyOpenAI answers as OpenAI does for a model without vision.
	TextOnlyOpenAI
	// TextOnlyVLLM answers as vLLM does for a model served without
	// multimodal inputs.
	TextOnlyVLLM
)

// WithTextOnly makes the server a text-only endpoint (see TextOnly).
func WithTextOnly(t TextOnly) Option { return func(s *Server) { s.textOnly = t } }

// SetTextOnly changes whether the server refuses image parts.
func (s *Server) SetTextOnly(t TextOnly) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.textOnly = t
}

// refuseImages is the 400 a text-only endpoint sends for image parts.
func (t TextOnly) refuseImages(req *request) (Reply, bool) {
	if t == TakesImages || !hasImageParts(req.Messages) {
		return Reply{}, false
	}
	if t == TextOnlyVLLM {
		return Reply{Status: http.StatusBadRequest,
			RawBody: `{"object":"error","message":"At most 0 image(s) may be provided in one request. You can set --limit-mm-per-prompt to increase this limit if the model supports it.","type":"BadRequestError","param":null,"code":400}`}, true
	}
	return Reply{Status: http.StatusBadRequest, RawBody: openAIErrorBody("Invalid content type. image_url is only supported by certain models.",
		"invalid_request_error", "messages.[1].content.[1].type", "")}, true
}

// hasImageParts reports an image_url part in any message.
func hasImageParts(msgs []openai.ChatCompletionMessage) bool {
	for _, m := range msgs {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL {
				return true
			}
		}
	}
	return false
}
