package agent

import "strings"

// NetworkNews is what a run's request tells the agent about its network:
// the hosts the thread allowed since its last request (ARCHITECTURE.md,
// "Network for the agent"), so it knows a command refused before may now
// succeed.
type NetworkNews struct {
	Allowed []string `json:"allowed,omitempty"` // host:port entries
}

// note is the paragraph the prompt gains; "" for none.
func (n *NetworkNews) note() string {
	if n == nil || len(n.Allowed) == 0 {
		return ""
	}
	return "\n\nNote from h9: since your last request, the thread allowed your commands to reach " +
		"`" + strings.Join(n.Allowed, "`, `") + "` through h9's network proxy. " +
		"A command that was refused one of these hosts may be run again."
}
