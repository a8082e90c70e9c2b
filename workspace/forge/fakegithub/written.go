package fakegithub

// Written is a comment the token's own user wrote on a pull request: a
// reply in a review thread (InReplyTo set) or a conversation comment.
type Written struct {
	ID        int64
	InReplyTo int64
	Body      string
}

// Written lists what the token's user wrote on pull n, oldest first:
// the replies to review comments, then the conversation comments.
func (s *Server) Written(fullName string, n int) []Written {
	var out []Written
	s.with(fullName, func(r *repo) {
		for _, c := range r.fb.inline[n] {
			if mine(c, s.login) {
				to, _ := c["in_reply_to_id"].(int64)
				out = append(out, Written{ID: c["id"].(int64), InReplyTo: to, Body: c["body"].(string)})
			}
		}
		for _, c := range r.fb.comments[n] {
			if mine(c, s.login) {
				out = append(out, Written{ID: c["id"].(int64), Body: c["body"].(string)})
			}
		}
	})
	return out
}

func mine(c map[string]any, login string) bool {
	u, _ := c["user"].(map[string]any)
	return u != nil && u["login"] == login
}
