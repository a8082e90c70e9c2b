package main

import (
	"time"

	"github.com/h9-app/h9/bot"
)

// FollowConfig is the settings of following the requests h9 opened
// (ARCHITECTURE.md, "Following a request").
type FollowConfig struct {
	ForgePoll      time.Duration `split_words:"true" default:"60s" desc:"how often a followed pull/merge request is read for review feedback and failing checks (at least 10s)"`
	ForgeFollowFor time.Duration `split_words:"true" default:"720h" desc:"stop following a request nothing happened on for this long"`
}

// checkFollow validates the following settings, one line naming the one at fault.
func (c *Config) checkFollow() error {
	if err := atLeast("H9_FORGE_POLL", c.ForgePoll, bot.MinForgePoll); err != nil {
		return err
	}
	return atLeast("H9_FORGE_FOLLOW_FOR", c.ForgeFollowFor, c.ForgePoll)
}

// follow fills the bot's following from the settings: the repositories
// give the forge clients (nil repos: nothing to follow).
func (c FollowConfig) follow(bc *bot.Config, repos bot.Repos) {
	bc.ForgePoll, bc.ForgeFollowFor = c.ForgePoll, c.ForgeFollowFor
	if f, ok := repos.(bot.Forges); ok && repos != nil {
		bc.Forges = f
	}
}
