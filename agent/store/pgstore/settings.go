package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// ChannelSetting returns one setting of a channel ("" when unset).
func (s *Store) ChannelSetting(ctx context.Context, channel, key string) (string, error) {
	var value string
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		return q.QueryRow(ctx, "SELECT value FROM h9_channel_settings WHERE channel = $1 AND key = $2", channel, key).Scan(&value)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", wrap("reading setting "+key+" of channel "+channel, err)
	}
	return value, nil
}

// SetChannelSetting sets one setting of a channel; "" removes it.
func (s *Store) SetChannelSetting(ctx context.Context, channel, key, value string) error {
	what := "saving setting " + key + " of channel " + channel
	if !validText(channel, key) || !validText(value+"x") {
		return fmt.Errorf("%w: %s: empty or malformed channel, key or value", store.ErrInvalid, what)
	}
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		var err error
		if value == "" {
			_, err = q.Exec(ctx, "DELETE FROM h9_channel_settings WHERE channel = $1 AND key = $2", channel, key)
		} else {
			_, err = q.Exec(ctx, `INSERT INTO h9_channel_settings (channel, key, value) VALUES ($1, $2, $3)
				ON CONFLICT (channel, key) DO UPDATE SET value = EXCLUDED.value`, channel, key, value)
		}
		return err
	})
	if err != nil {
		return wrap(what, err)
	}
	return nil
}
