package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"golang.org/x/sys/unix"
)

// Slack's IDs: users U… or W… (Enterprise Grid), conversations C…
// (public), G… (private, older) or D… (direct message), then capitals and digits.
var (
	slackUserIDRE    = regexp.MustCompile(`^[UW][A-Z0-9]+$`)
	slackChannelIDRE = regexp.MustCompile(`^[CGD][A-Z0-9]+$`)
)

const (
	userIDHint    = "a user ID looks like U012AB3CD: in Slack, open the person's profile → ⋮ → Copy member ID"
	channelIDHint = "a channel ID looks like C012AB3CD: in Slack, open the channel's name → About, the ID is at the bottom"
)

// checkStartup is what start-up checks beyond each value's form: the
// Slack IDs' shape (a name or an email would lock everyone out or make no
// admin, silently) and the directories, which must exist now rather than
// fail in the first session.
func (c *Config) checkStartup() error {
	checks := []func() error{
		func() error {
			return checkSlackIDs("H9_ALLOWED_USERS", c.AllowedUsers, slackUserIDRE, "user", userIDHint)
		},
		func() error { return checkSlackIDs("H9_ADMINS", c.Admins, slackUserIDRE, "user", userIDHint) },
		func() error {
			return checkSlackIDs("H9_ALLOWED_CHANNELS", c.AllowedChannels, slackChannelIDRE, "channel", channelIDHint)
		},
		func() error { return existingDir("H9_WORKSPACE_TEMPLATE", c.WorkspaceTemplate) },
		func() error { return existingDir("H9_SKILLS_DIR", c.SkillsDir) },
		func() error { return creatableDir("H9_DATA_DIR", c.DataDir) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func checkSlackIDs(name string, ids []string, re *regexp.Regexp, kind, hint string) error {
	for _, id := range cleanList(ids) {
		if !re.MatchString(id) {
			return invalid("%s: %q is not a Slack %s ID; %s", name, id, kind, hint)
		}
	}
	return nil
}

// existingDir: empty (the setting is off) or a directory h9 can read.
func existingDir(name, path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return invalid("%s=%q is not a directory: point it at an existing directory or unset it", name, path)
	}
	if unix.Access(path, unix.R_OK|unix.X_OK) != nil {
		return invalid("%s=%q cannot be read by this user: fix its permissions", name, path)
	}
	return nil
}

// creatableDir: a directory h9 may write, or one it may create (its
// nearest existing parent is a writable directory).
func creatableDir(name, path string) error {
	p := filepath.Clean(path)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return invalid("%s=%q: %s is a file, not a directory", name, path, p)
		case err == nil:
			if unix.Access(p, unix.W_OK|unix.X_OK) != nil {
				return invalid("%s=%q: %s is not writable by this user: fix its owner or choose another directory", name, path, p)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return invalid("%s=%q cannot be used: %v", name, path, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
