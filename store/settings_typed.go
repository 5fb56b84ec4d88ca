package store

import (
	"context"
	"strconv"
	"time"

	"github.com/helixml/helix-org/domain"
)

// SettingOr returns the stored value of spec, or its default. A `config
// set` takes effect without a restart, on the next read, whichever
// process made it (epoch_cache.go).
func (s *Store) SettingOr(ctx context.Context, spec domain.SettingSpec) (string, error) {
	v, ok, err := s.Setting(ctx, spec.Key)
	if err != nil || !ok {
		return spec.Default, err
	}
	return v, nil
}

// IntSetting reads an int setting, falling back to the default on a bad value.
func (s *Store) IntSetting(ctx context.Context, spec domain.SettingSpec) int64 {
	v, _ := s.SettingOr(ctx, spec)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		n, _ = strconv.ParseInt(spec.Default, 10, 64)
	}
	return n
}

// DurationSetting reads a duration setting.
func (s *Store) DurationSetting(ctx context.Context, spec domain.SettingSpec) time.Duration {
	v, _ := s.SettingOr(ctx, spec)
	d, err := time.ParseDuration(v)
	if err != nil {
		d, _ = time.ParseDuration(spec.Default)
	}
	return d
}

// BoolSetting reads a bool setting.
func (s *Store) BoolSetting(ctx context.Context, spec domain.SettingSpec) bool {
	v, _ := s.SettingOr(ctx, spec)
	b, err := strconv.ParseBool(v)
	if err != nil {
		b, _ = strconv.ParseBool(spec.Default)
	}
	return b
}
