package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// TestStatusFallsBackToResponseURL: where Slack refuses chat.postEphemeral
// (the bot is not in the channel), /h9 status still answers through the
// command's response_url; an endpoint without chat.getPermalink is asked
// only once, the links are built instead.
func TestStatusFallsBackToResponseURL(t *testing.T) {
	e := newEnv(t)
	e.planned("fallback task", "a:pending", "b:pending")

	e.slack.FailNext("chat.getPermalink", "unknown_method")
	e.slack.FailNext("chat.postEphemeral", "not_in_channel")
	e.slash(testUser, testChannel, "status")
	e.waitFor("status through the response_url", func() bool {
		for _, c := range e.slack.Calls("response_url") {
			if c.SlackError == "" && strings.Contains(string(c.Body), "0/2 tasks") {
				return true
			}
		}
		return false
	})
	e.slash(testUser, testChannel, "status")
	e.waitEphemeral(testChannel, testUser, "fallback task")
	if n := len(e.slack.Calls("chat.getPermalink")); n != 1 {
		t.Errorf("chat.getPermalink called %d times after unknown_method, want 1", n)
	}
}

// TestStatusAnswersWhileWebAPIHangs: with every Web API call hanging,
// /h9 status still answers, through the command's response_url, without
// waiting out chat.getPermalink (issue 26: it used to wait on
// chat.getPermalink, then chat.postEphemeral, for the whole hang).
func TestStatusAnswersWhileWebAPIHangs(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.planned("hung web api task", "a:pending", "b:pending")
	release := e.slack.Hang("")
	defer release()
	e.slash(testUser, testChannel, "status")
	e.waitFor("status through the response_url", func() bool {
		for _, c := range e.slack.Calls("response_url") {
			body := string(c.Body)
			if c.SlackError == "" && strings.Contains(body, "hung web api task") && strings.Contains(body, "0/2 tasks") {
				return true
			}
		}
		return false
	})
	if n := len(e.slack.Calls("chat.postEphemeral")); n != 0 {
		t.Errorf("chat.postEphemeral called %d times; the response_url answers a slash command", n)
	}
}
