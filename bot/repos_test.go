package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/gitrepo"
)

// The precedence: the task's repo= > the channel's /h9 repo (a name, or
// none) > the repository listing the channel > the only one > none.
func TestRepositoryPrecedence(t *testing.T) {
	two, err := gitrepo.New(gitrepo.Config{Dir: t.TempDir(), Author: gitrepo.Identity{Name: "h9", Email: "h9@localhost"},
		Repos: []gitrepo.Repo{{Name: "api", URL: "/srv/api.git", Channels: []string{"CAPI"}}, {Name: "web", URL: "/srv/web.git", Branch: "develop"}}})
	if err != nil {
		t.Fatal(err)
	}
	one, err := gitrepo.New(gitrepo.Config{Dir: t.TempDir(), Author: gitrepo.Identity{Name: "h9", Email: "h9@localhost"},
		Repos: []gitrepo.Repo{{Name: "solo", URL: "/srv/solo.git"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		repos            Repos
		opts             taskOptions
		setting, channel string
		want, base, err  string
	}{
		{two, taskOptions{repo: "WEB"}, "api", "CAPI", "web", "develop", ""},
		{two, taskOptions{repo: "none"}, "api", "CAPI", "", "", ""},
		{two, taskOptions{}, "web", "CAPI", "web", "develop", ""},
		{two, taskOptions{}, "none", "CAPI", "", "", ""},
		{two, taskOptions{}, "", "CAPI", "api", "", ""},
		{two, taskOptions{branch: "release"}, "", "CAPI", "api", "release", ""},
		{two, taskOptions{}, "", "COTHER", "", "", ""},
		{two, taskOptions{branch: "x"}, "", "COTHER", "", "", "`branch=` needs a repository"},
		{two, taskOptions{}, "gone", "CAPI", "", "", "is not configured any more"},
		{two, taskOptions{repo: "nope"}, "", "CAPI", "", "", "the repositories are `api`, `web` and `none`"},
		{one, taskOptions{}, "", "COTHER", "solo", "", ""},
		{nil, taskOptions{}, "", "C1", "", "", ""},
	} {
		b := &Bot{cfg: Config{Repos: c.repos}}
		got, err := b.chooseRepo(c.opts, c.setting, c.channel, "fix the thing")
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err %v, want %q", c, err, c.err)
			}
		case err != nil:
			t.Errorf("%+v: %v", c, err)
		case c.want == "" && got != nil:
			t.Errorf("%+v: got %+v, want none", c, got)
		case c.want != "" && (got == nil || got.Name != c.want || got.Base != c.base || !strings.HasPrefix(got.Branch, "h9/fix-the-thing-")):
			t.Errorf("%+v: got %+v, want %s from %q", c, got, c.want, c.base)
		}
	}
}
