package main

import (
	"context"
	"io"
)

// run starts the bot and blocks until ctx is cancelled. (wiring follows when agent and bot exist)
func run(ctx context.Context, cfg Config, stderr io.Writer) error {
	log := newLogger(stderr, cfg.LogFormat, cfg.LogLevel, secretsOf(cfg))
	db, err := openDB(cfg.DataDir, dbLockTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("h9 started", "data_dir", cfg.DataDir)
	<-ctx.Done()
	return nil
}
