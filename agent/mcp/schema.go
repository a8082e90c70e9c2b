package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxSchemaBytes bounds one tool's schema: every model request carries it.
const maxSchemaBytes = 16 << 10

// maxSchemaDepth bounds its nesting, which model APIs also limit.
const maxSchemaDepth = 12

// inputSchema turns a server's input schema into one the model API takes:
// a JSON object of type "object", without references outside itself, not
// too large or deep. The error says why a tool is left out.
func inputSchema(raw any) (json.RawMessage, error) {
	var schema map[string]any
	switch v := raw.(type) {
	case nil:
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	case map[string]any:
		schema = v
	default:
		data, err := json.Marshal(v)
		if err != nil || json.Unmarshal(data, &schema) != nil {
			return nil, fmt.Errorf("its input schema is not a JSON object")
		}
	}
	switch t := schema["type"]; t {
	case "object":
	case nil:
		schema["type"] = "object"
	default:
		return nil, fmt.Errorf("its input schema has type %v, not object", t)
	}
	delete(schema, "$schema")
	delete(schema, "$id")
	if err := checkNode(schema, 0); err != nil {
		return nil, err
	}
	if _, ok := schema["properties"]; !ok {
		schema["properties"] = map[string]any{}
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be encoded: %v", err)
	}
	if len(data) > maxSchemaBytes {
		return nil, fmt.Errorf("its input schema has %d bytes, more than %d", len(data), maxSchemaBytes)
	}
	return data, nil
}

// checkNode refuses references that leave the schema and nesting too deep.
func checkNode(v any, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("its input schema is nested deeper than %d levels", maxSchemaDepth)
	}
	switch n := v.(type) {
	case map[string]any:
		if ref, ok := n["$ref"]; ok {
			s, _ := ref.(string)
			if !strings.HasPrefix(s, "#") {
				return fmt.Errorf("its input schema refers outside itself ($ref %q)", s)
			}
		}
		for _, c := range n {
			if err := checkNode(c, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range n {
			if err := checkNode(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
