package bot

import (
	"fmt"
	"regexp"
	"strings"
)

// taskOptions are the options block of a task: `[repo=backend branch=x]`.
type taskOptions struct {
	repo   string // a configured name, "none", or "" when not given
	branch string // the base branch; "" when not given
}

// optionNames are the keys an options block may use, in the order shown.
var optionNames = []string{"repo", "branch"}

// optionPairRE is one key=value pair of an options block.
var optionPairRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*)=(.*)$`)

// splitOptions takes a leading options block off a task. The block is
// options only when everything in it is key=value pairs (separated by
// spaces or commas); anything else (`[WIP] fix x`, `[]`) is part of the
// task and comes back as it was. A block with an unknown key, a key twice
// or an empty value is an error naming the valid keys.
func splitOptions(text string) (taskOptions, string, error) {
	task := strings.TrimSpace(text)
	if !strings.HasPrefix(task, "[") {
		return taskOptions{}, task, nil
	}
	end := strings.IndexByte(task, ']')
	if end < 0 {
		return taskOptions{}, task, nil
	}
	pairs := strings.FieldsFunc(task[1:end], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\u00a0' })
	if len(pairs) == 0 {
		return taskOptions{}, task, nil
	}
	for _, p := range pairs {
		if !optionPairRE.MatchString(p) {
			return taskOptions{}, task, nil // not an options block
		}
	}
	var opts taskOptions
	seen := map[string]bool{}
	for _, p := range pairs {
		m := optionPairRE.FindStringSubmatch(p)
		key, value := strings.ToLower(m[1]), m[2]
		switch {
		case seen[key]:
			return taskOptions{}, "", fmt.Errorf("the option `%s` is given twice", key)
		case key != "repo" && key != "branch":
			return taskOptions{}, "", fmt.Errorf("`%s` is not an option; the options are %s", m[1], quoteList(optionNames))
		case value == "":
			return taskOptions{}, "", fmt.Errorf("the option `%s=` needs a value", key)
		}
		seen[key] = true
		if key == "repo" {
			opts.repo = value
		} else {
			opts.branch = value
		}
	}
	return opts, strings.TrimSpace(task[end+1:]), nil
}

// quoteList renders names as `a`, `b` and `c`.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	switch len(q) {
	case 0:
		return "none"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
