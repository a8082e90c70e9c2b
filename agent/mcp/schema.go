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
	if err := checkTop(schema); err != nil {
		return nil, err
	}
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

// topCombinators are what OpenAI refuses at a function schema's top level
// ("schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/
// 'enum'/'not' at the top level").
var topCombinators = []string{"oneOf", "anyOf", "allOf", "enum", "not"}

// checkTop refuses what the model API refuses of the top level: a
// combinator, properties that are not an object, required that is not a
// list of names.
func checkTop(schema map[string]any) error {
	for _, k := range topCombinators {
		if _, ok := schema[k]; ok {
			return fmt.Errorf("its input schema has %q at the top level", k)
		}
	}
	if p, ok := schema["properties"]; ok {
		if _, isObject := p.(map[string]any); !isObject {
			return fmt.Errorf("its input schema's properties is not an object")
		}
	}
	if r, ok := schema["required"]; ok {
		list, isList := r.([]any)
		for _, v := range list {
			if _, isName := v.(string); !isName {
				isList = false
			}
		}
		if !isList {
			return fmt.Errorf("its input schema's required is not a list of names")
		}
	}
	return nil
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
