package fakemodel

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// imageURLs are the URLs of a content array's image_url parts (a data
// URL for h9's images), nil for plain text.
func imageURLs(raw json.RawMessage) []string {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var urls []string
	for _, p := range parts {
		if p.Type == string(openai.ChatMessagePartTypeImageURL) && p.ImageURL != nil {
			urls = append(urls, p.ImageURL.URL)
		}
	}
	return urls
}

// parts is a message with images as the recorded request shows it: its
// text part, then its image parts, in MultiContent (Content keeps the
// text too, for tests that read it).
func (m inMessage) parts() []openai.ChatMessagePart {
	if len(m.images) == 0 {
		return nil
	}
	out := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.content}}
	for _, u := range m.images {
		out = append(out, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: u}})
	}
	return out
}
