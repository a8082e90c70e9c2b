package forge

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// CheckAccess reads the project (the token accepted? the project there?
// merge requests on?) and the token user's access level on it
// (Developer or above pushes and opens merge requests), then the token's
// scopes where GitLab says them (api is needed).
func (g *gitLab) CheckAccess(ctx context.Context) error {
	var proj *gitlab.Project
	err := g.call(ctx, "reading "+g.p.Path, func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		proj, resp, err = g.gl.Projects.GetProject(g.p.Path, nil, o)
		return resp, err
	})
	if err != nil {
		return err
	}
	if proj.MergeRequestsAccessLevel == gitlab.DisabledAccessControl {
		return &Error{Kind: GitLab, Doing: "checking " + g.p.Path, Words: fmt.Sprintf("merge requests are turned off on %s (Settings → General → Visibility)", g.p.Path)}
	}
	if level := projectAccess(proj); level < developer {
		if err := g.checkMembership(ctx, level); err != nil {
			return err
		}
	}
	return g.checkScopes(ctx)
}

// checkMembership asks the token user's effective membership when the
// project's permissions show less than Developer: access through a group
// the project is shared with shows only there. An administrator may
// anyway.
func (g *gitLab) checkMembership(ctx context.Context, level gitlab.AccessLevelValue) error {
	me, err := g.me(ctx)
	if err != nil || me.IsAdmin {
		return err
	}
	var m *gitlab.ProjectMember
	err = g.call(ctx, "reading the token user's membership", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		m, resp, err = g.gl.ProjectMembers.GetInheritedProjectMember(g.p.Path, me.ID, o)
		return resp, err
	})
	if e, isErr := err.(*Error); isErr && e.Status == http.StatusNotFound {
		err = nil // not a member
	}
	if err != nil {
		return err
	}
	if m != nil {
		level = max(level, m.AccessLevel)
	}
	if level >= developer {
		return nil
	}
	return &Error{Kind: GitLab, Doing: "checking the token's rights", Words: fmt.Sprintf(
		"the token in %s is @%s with %s access to %s: it needs Developer or above to push and open merge requests",
		g.p.TokenEnv, me.Username, accessName(level), g.p.Path)}
}

// projectAccess is the higher of the project's and its group's access
// level for the token's user.
func projectAccess(p *gitlab.Project) gitlab.AccessLevelValue {
	var level gitlab.AccessLevelValue
	if p.Permissions == nil {
		return level
	}
	if a := p.Permissions.ProjectAccess; a != nil {
		level = max(level, a.AccessLevel)
	}
	if a := p.Permissions.GroupAccess; a != nil {
		level = max(level, a.AccessLevel)
	}
	return level
}

// checkScopes reads the token itself (personal, project and group access
// tokens; GitLab 15.5 and later): without the api scope it can neither
// open merge requests nor push. An OAuth token, or an older GitLab, does
// not answer; then the calls themselves will say.
func (g *gitLab) checkScopes(ctx context.Context) error {
	var tok *gitlab.PersonalAccessToken
	err := g.call(ctx, "reading the token's scopes", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		tok, resp, err = g.gl.PersonalAccessTokens.GetSinglePersonalAccessToken(o)
		return resp, err
	})
	if _, limited := err.(*RateLimited); limited {
		return err
	}
	if e, ok := err.(*Error); ok && e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden && e.Status != http.StatusNotFound {
		return err
	}
	if err != nil || tok == nil {
		return nil
	}
	if !slices.Contains(tok.Scopes, "api") {
		return &Error{Kind: GitLab, Doing: "checking the token's rights", Words: fmt.Sprintf(
			"the token in %s has the scopes %v: it needs api (merge requests, and pushes through write_repository, which api includes)", g.p.TokenEnv, tok.Scopes)}
	}
	return nil
}

// me is the token's user, asked once per client.
func (g *gitLab) me(ctx context.Context) (*gitlab.User, error) {
	var u *gitlab.User
	err := g.call(ctx, "reading the token's user", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		u, resp, err = g.gl.Users.CurrentUser(o)
		return resp, err
	})
	return u, err
}
