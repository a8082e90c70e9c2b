package render

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack"
)

// BenchmarkRenderChecklist renders the 200-todo, 500-character plan: the
// cost the bot pays on every todo snapshot of a huge plan.
func BenchmarkRenderChecklist(b *testing.B) {
	c := Checklist{SessionID: "s", Task: "a big task", State: "running", Todos: bigPlan(), Running: true, Activity: "bash: go test ./..."}
	var m Message
	b.ReportAllocs()
	for b.Loop() {
		m = RenderChecklist(c)
	}
	data, err := json.Marshal(slack.Blocks{BlockSet: m.Blocks})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(m.Blocks)), "blocks")
	b.ReportMetric(float64(len(data)), "payload-bytes")
}
