package boltstore

import (
	"context"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// ChannelSetting returns one setting of a channel ("" when unset).
func (s *Store) ChannelSetting(ctx context.Context, channel, key string) (string, error) {
	var value string
	err := s.view(ctx, "reading setting "+key+" of channel "+channel, func(tx *bolt.Tx) error {
		value = string(tx.Bucket(bucketChannels).Get(compositeKey(channel, key)))
		return nil
	})
	return value, err
}

// SetChannelSetting sets one setting of a channel; "" removes it.
func (s *Store) SetChannelSetting(ctx context.Context, channel, key, value string) error {
	what := "saving setting " + key + " of channel " + channel
	if channel == "" || key == "" || strings.IndexByte(channel, keySeparator) >= 0 {
		return fmt.Errorf("%w: %s: empty or malformed channel or key", store.ErrInvalid, what)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		b, k := tx.Bucket(bucketChannels), compositeKey(channel, key)
		if value == "" {
			return b.Delete(k)
		}
		return b.Put(k, []byte(value))
	})
}
