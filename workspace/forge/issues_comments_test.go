package forge

import (
	"strings"
	"testing"
)

// The page lastPage names holds the newest comments, up to 50, of any
// count of comments GitHub could list, in pages of at most 100.
func TestLastPageHoldsTheNewest(t *testing.T) {
	t.Parallel()
	for total := 1; total <= 20000; total++ {
		size, page := lastPage(total, maxIssueComments)
		start, end := (page-1)*size, min(page*size, total)
		if size < 1 || size > perPage || end != total || end-start < min(total, maxIssueComments) {
			t.Fatalf("%d comments: page %d of %d holds %d..%d", total, page, size, start, end)
		}
	}
}

// newestComments keeps the newest comments within the count and size
// bounds, oldest first, cuts a long one head and tail, and counts what
// it left out.
func TestNewestCommentsBounds(t *testing.T) {
	t.Parallel()
	var list []IssueComment
	for range 10 {
		list = append(list, IssueComment{Author: "a", Body: strings.Repeat("x", 6<<10)})
	}
	list = append(list, IssueComment{Author: "b", Body: "head " + strings.Repeat("y", 20<<10) + " tail"})
	kept, left := newestComments(list, 40)
	size := 0
	for _, c := range kept {
		size += len(c.Author) + len(c.Body)
	}
	if size > maxIssueCommentBytes || len(kept) < 2 || left != 40-len(kept) {
		t.Fatalf("kept %d comments of %d bytes, %d left out", len(kept), size, left)
	}
	last := kept[len(kept)-1]
	if last.Author != "b" || len(last.Body) > maxIssueCommentLen+100 || !strings.HasPrefix(last.Body, "head ") || !strings.HasSuffix(last.Body, " tail") {
		t.Errorf("the newest comment, cut: %q…", last.Body[:40])
	}
	if kept, left := newestComments(list[:3], 3); len(kept) != 3 || left != 0 {
		t.Errorf("three short comments: kept %d, left out %d", len(kept), left)
	}
}
