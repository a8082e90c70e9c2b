package forge

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// hunkLines is how much of the diff above a commented line a hunk keeps.
const hunkLines = 20

// hunk is the diff hunk of path up to the commented line (on the old side
// for a removed line), as GitHub's diff_hunk is; the merge request's diffs
// are read once per poll, on the first inline note. A diff GitLab does not
// serve gives "", only a rate limit is an error.
func (p *glPoll) hunk(ctx context.Context, path string, line int, old bool) (string, error) {
	if p.diffs == nil {
		if err := p.readDiffs(ctx); err != nil {
			return "", err
		}
	}
	for _, d := range p.diffs {
		if d.NewPath == path || old && d.OldPath == path {
			return hunkAt(d.Diff, line, old), nil
		}
	}
	return "", nil
}

func (p *glPoll) readDiffs(ctx context.Context) error {
	p.diffs = []*gitlab.MergeRequestDiff{}
	for page := int64(1); page != 0; {
		var next int64
		err := p.call(ctx, "reading the merge request's diffs", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
			l, resp, err := p.g.gl.MergeRequests.ListMergeRequestDiffs(p.g.p.Path, p.number,
				&gitlab.ListMergeRequestDiffsOptions{ListOptions: gitlab.ListOptions{Page: page, PerPage: perPage}}, o)
			if resp != nil {
				next = resp.NextPage
			}
			p.diffs = append(p.diffs, l...)
			return resp, err
		})
		if _, limited := err.(*RateLimited); limited {
			return err
		}
		if err != nil {
			return nil // an older GitLab without /diffs: inline notes come without hunks
		}
		page = next
	}
	return nil
}

var hunkHeaderRE = regexp.MustCompile(`^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// hunkAt is the hunk header and the lines of diff above and at line.
func hunkAt(diff string, line int, old bool) string {
	var header string
	var body []string
	oldN, newN := 0, 0
	for _, l := range strings.Split(diff, "\n") {
		if m := hunkHeaderRE.FindStringSubmatch(l); m != nil {
			header, body = l, nil
			oldN, _ = strconv.Atoi(m[1])
			newN, _ = strconv.Atoi(m[2])
			continue
		}
		if header == "" || l == "" || l[0] == '\\' {
			continue
		}
		body = append(body, l)
		hit := false
		switch l[0] {
		case '+':
			hit = !old && newN == line
			newN++
		case '-':
			hit = old && oldN == line
			oldN++
		default:
			hit = !old && newN == line || old && oldN == line
			oldN, newN = oldN+1, newN+1
		}
		if hit {
			if len(body) > hunkLines {
				body = body[len(body)-hunkLines:]
			}
			return header + "\n" + strings.Join(body, "\n")
		}
	}
	return ""
}
