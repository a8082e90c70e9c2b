package bot

import (
	"strings"
	"testing"
)

// Opening the Home tab publishes what h9 is, how to start and the user's
// own sessions with state, x/y tasks and a link; others see none of them.
func TestHomeTabListsOwnSessions(t *testing.T) {
	e := newEnv(t)
	thread, _ := e.planned("home tab <!here> task", "a:pending")
	e.waitChecklist(thread, "awaiting review")

	home := func(user string) string {
		return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(e.slack.HomeView(user)))
	}
	for _, user := range []string{testUser, "U2"} {
		if err := e.slack.OpenHome(e.ctx, user); err != nil {
			t.Fatal(err)
		}
		e.waitFor("the home tab of "+user, func() bool { return home(user) != "" })
	}
	got := home(testUser)
	for _, want := range []string{"/h9 plan", "/h9 run", "@h9", "home tab &lt;!here&gt; task", "awaiting review", "0/1 tasks", "open thread", "<#" + testChannel + ">"} {
		if !strings.Contains(got, want) {
			t.Errorf("home tab lacks %q: %s", want, got)
		}
	}
	if other := home("U2"); strings.Contains(other, "home tab") || !strings.Contains(other, "None yet") {
		t.Errorf("another user's home tab: %s", other)
	}
}
