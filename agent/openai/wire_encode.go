package openai

import (
	"encoding/json"
	"sync"

	goopenai "github.com/sashabaranov/go-openai"
)

// encodedDefs holds each KeepEncoded slice's JSON (agent's tools of a
// mode), by its first element: every step of every run sends one of
// those few slices, which never change, so they are encoded once.
var encodedDefs sync.Map // *goopenai.Tool → []byte

// KeepEncoded encodes defs, a slice every step of a mode sends and no
// one changes, once, for every request that carries it (encodedDefs).
func KeepEncoded(defs []goopenai.Tool) {
	if data, err := json.Marshal(defs); err == nil {
		encodedDefs.Store(&defs[0], data)
	}
}

// encode writes the request as json.Marshal would, byte for byte, with
// less work: the shared tool definitions come encoded (encodedDefs), and
// each message's own encoding goes in as it is, where json.Marshal would
// check and compact a Marshaler's output byte by byte again (a request
// carries the whole conversation, so that pass grew with every step).
func (w wireRequest) encode() ([]byte, error) {
	model, err := json.Marshal(w.Model)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 4096)
	b = append(append(append(b, `{"model":`...), model...), `,"messages":`...)
	if w.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range w.Messages {
			data, err := m.MarshalJSON()
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, data...)
		}
		b = append(b, ']')
	}
	if len(w.Tools) > 0 {
		tools, err := encodeTools(w.Tools)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"tools":`...), tools...)
	}
	return w.appendOptions(b)
}

// appendOptions writes the optional fields after the tools and closes the object.
func (w wireRequest) appendOptions(b []byte) ([]byte, error) {
	if w.Stream {
		b = append(b, `,"stream":true`...)
	}
	if w.StreamOptions != nil {
		opts, err := json.Marshal(w.StreamOptions)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"stream_options":`...), opts...)
	}
	if w.User != "" {
		user, err := json.Marshal(w.User)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"user":`...), user...)
	}
	return append(b, '}'), nil
}

// encodeTools is the JSON of tools: encodedDefs' when they are a
// KeepEncoded slice, else encoded now.
func encodeTools(tools []goopenai.Tool) ([]byte, error) {
	if data, ok := encodedDefs.Load(&tools[0]); ok && len(tools) == cap(tools) {
		return data.([]byte), nil
	}
	return json.Marshal(tools)
}
