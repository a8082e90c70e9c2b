package main

import (
	"context"
	"fmt"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// checkRepos asks each configured repository's remote for its branches
// (git ls-remote, with the credentials h9's fetches use) and, for one on
// GitHub, whether H9_GITHUB_TOKEN may push there (open pull requests).
// One line per repository.
func checkRepos(ctx context.Context, cfg Config) finding {
	if len(cfg.repos) == 0 {
		return ok("none configured: sessions start in an empty workspace (H9_REPOS, H9_REPOS_FILE)")
	}
	repos, err := cfg.newRepos(nil)
	if err != nil {
		return failed("check H9_DATA_DIR and that git is installed", "%v", err)
	}
	defer repos.Close()
	f := ok("%d configured", len(cfg.repos))
	for _, r := range cfg.repos {
		line, v := checkRepo(ctx, repos, r)
		f.verdict = max(f.verdict, v)
		f.more = append(f.more, v.mark()+" "+r.Name+": "+line)
	}
	switch f.verdict {
	case verdictFail:
		f.hint = "fix each ✗ below: the URL, the host's git credentials (ssh keys, credential helper) or the forge's token and its rights"
	case verdictWarn:
		f.hint = "set each forge's token (H9_GITHUB_TOKEN, H9_GITLAB_TOKEN, H9_GITEA_TOKEN or its token_env) to open requests"
	}
	return f
}

func checkRepo(ctx context.Context, repos *gitrepo.Repos, r gitrepo.Repo) (string, verdict) {
	n, err := repos.CheckRemote(ctx, r.Name)
	if err != nil {
		return oneLine(err), verdictFail
	}
	line := fmt.Sprintf("%s is reachable (%d %s)", gitrepo.Redact(r.URL), n, plural(n, "branch", "branches"))
	p, onForge := repos.ForgeProject(r)
	word := repos.RequestWord(r)
	switch {
	case !onForge:
		return line + "; on no forge h9 knows (set forge: to open requests): Push branch only", verdictOK
	case !forge.Supported(p.Kind):
		return line + fmt.Sprintf("; %s %ss are not supported yet: Push branch only", p.Kind.Title(), word), verdictWarn
	case !repos.CanOpenPullRequests(r):
		return line + fmt.Sprintf("; no %s: Push branch only, no Open %s", p.TokenEnv, word), verdictWarn
	}
	if err := repos.CheckAccess(ctx, r.Name); err != nil {
		return line + "; " + oneLine(err), verdictFail
	}
	return line + fmt.Sprintf("; the token may open %ss on %s (%s, %s; it may push)", word, p.Path, p.Kind.Title(), p.TokenEnv), verdictOK
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
