package forge_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/forge/forgetest"
)

// BenchmarkAutomationQuietHour: one quiet repository watched by an issue
// trigger (label h9) and a check trigger (its branch's head, whose one
// check has passed) for an hour at H9_FORGE_POLL=60s — 60 reads of each
// after a first — on each forge's fake through its official client. It
// reports the API requests an hour, those answered 304 and the rest,
// which the rate limit counts (issue 33's budget: at most 120).
func BenchmarkAutomationQuietHour(b *testing.B) {
	for _, kind := range []forge.Kind{forge.GitHub, forge.GitLab, forge.Gitea} {
		b.Run(string(kind), func(b *testing.B) {
			bare, sha := forgetest.Bare(b)
			c, requests := automationRepo(b, kind, bare, sha)
			ctx := context.Background()
			trig := forge.IssueTrigger{Label: "h9"}
			since := time.Time{}
			var total, cached int
			for b.Loop() {
				_, icur, err := c.IssueEvents(ctx, trig, since, forge.Cursor{})
				if err != nil {
					b.Fatal(err)
				}
				_, _, ccur, err := c.BranchChecks(ctx, forgetest.Branch, forge.Cursor{})
				if err != nil {
					b.Fatal(err)
				}
				before := len(requests())
				for range 60 {
					if _, icur, err = c.IssueEvents(ctx, trig, since, icur); err != nil {
						b.Fatal(err)
					}
					if _, _, ccur, err = c.BranchChecks(ctx, forgetest.Branch, ccur); err != nil {
						b.Fatal(err)
					}
				}
				total, cached = 0, 0
				for _, status := range requests()[before:] {
					total++
					if status == http.StatusNotModified {
						cached++
					}
				}
			}
			b.ReportMetric(float64(total), "requests/hour")
			b.ReportMetric(float64(cached), "304/hour")
			b.ReportMetric(float64(total-cached), "counted/hour")
		})
	}
}

// automationRepo serves bare on kind's fake with one issue already
// labelled h9 and a passed check on sha; requests lists the status of
// every answer so far.
func automationRepo(b *testing.B, kind forge.Kind, bare, sha string) (c forge.Client, requests func() []int) {
	var p forge.Project
	var token string
	switch kind {
	case forge.GitHub:
		s := fakegithub.New("ghp_good")
		b.Cleanup(s.Close)
		s.AddRepo("acme/r", bare, true)
		s.Label("acme/r", s.AddIssue("acme/r", "carol", "old", ""), "h9", "carol")
		s.AddCheckRun("acme/r", sha, "build", "github-actions", "success", "")
		p, token = forge.Project{Kind: kind, Path: "acme/r", API: s.URL(), TokenEnv: "H9_GITHUB_TOKEN"}, "ghp_good"
		requests = func() (out []int) {
			for _, r := range s.Requests() {
				out = append(out, r.Status)
			}
			return out
		}
	case forge.GitLab:
		s := fakegitlab.New("glpat-good")
		b.Cleanup(s.Close)
		s.AddProject("acme/r", bare, fakegitlab.Developer)
		s.Label("acme/r", s.AddIssue("acme/r", "carol", "old", ""), "h9", "carol")
		s.AddPipeline("acme/r", sha, "success")
		p, token = forge.Project{Kind: kind, Path: "acme/r", API: s.URL(), TokenEnv: "H9_GITLAB_TOKEN"}, "glpat-good"
		requests = func() (out []int) {
			for _, r := range s.Requests() {
				out = append(out, r.Status)
			}
			return out
		}
	case forge.Gitea:
		s := fakegitea.New("gt_good")
		b.Cleanup(s.Close)
		s.AddRepo("acme/r", bare, true)
		s.Label("acme/r", s.AddIssue("acme/r", "carol", "old", ""), "h9", "carol")
		s.AddStatus("acme/r", sha, "ci/build", "success", "", "")
		p, token = forge.Project{Kind: kind, Path: "acme/r", API: s.URL(), TokenEnv: "H9_GITEA_TOKEN"}, "gt_good"
		requests = func() (out []int) {
			for _, r := range s.Requests() {
				out = append(out, r.Status)
			}
			return out
		}
	}
	c, err := forge.New(p, token, nil)
	if err != nil {
		b.Fatal(err)
	}
	return c, requests
}
