package planning

import "sync"

// TodoStore is a thread-safe todo list with full-replace semantics: the model
// always sends the whole list, so a write is a snapshot, never a merge.
// The zero value is an empty store ready to use.
type TodoStore struct {
	mu    sync.RWMutex
	items []TodoItem
}

// NewTodoStore returns a store holding a copy of items.
func NewTodoStore(items ...TodoItem) *TodoStore {
	s := &TodoStore{}
	s.Write(items)
	return s
}

// Write atomically replaces the list. It copies twice, as the design asks:
// the store never aliases the caller's input, and the returned slice never
// aliases the store.
func (s *TodoStore) Write(items []TodoItem) []TodoItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = cloneItems(items)
	return cloneItems(s.items)
}

// Read returns a copy of the current list.
func (s *TodoStore) Read() []TodoItem {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return cloneItems(s.items)
}

// FormatForInjection renders the active items for a compaction summary; it
// makes TodoStore satisfy the compactor's TodoInjector interface.
func (s *TodoStore) FormatForInjection() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return FormatForInjection(s.items)
}

// Progress summarises the current list.
func (s *TodoStore) Progress() Progress {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Summarize(s.items)
}
