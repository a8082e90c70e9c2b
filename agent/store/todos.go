package store

import (
	"encoding/json"

	"github.com/h9-app/h9/planning"
)

// EncodeTodos is a todo list as every backend stores it: nil for no
// change (a nil pointer), "[]" for an empty list, else its JSON.
func EncodeTodos(items *[]planning.TodoItem) ([]byte, error) {
	if items == nil {
		return nil, nil
	}
	if *items == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(*items)
}
