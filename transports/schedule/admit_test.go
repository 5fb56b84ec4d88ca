package schedule_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/schedule"
)

// TestMinInterval: the shortest wall-clock gap between two ticks, within
// a day and across midnight when two days in a row match.
func TestMinInterval(t *testing.T) {
	tests := []struct {
		cron string
		want time.Duration
	}{
		{"* * * * *", time.Minute},
		{"*/5 * * * *", 5 * time.Minute},
		{"0,10,55 * * * *", 5 * time.Minute}, // :55 to the next hour's :00
		{"0 * * * *", time.Hour},
		{"30 8,9 * * 1-5", time.Hour},
		{"0 8 * * *", 24 * time.Hour},
		{"59 23 * * *", 24 * time.Hour},
		{"0,59 0,23 * * *", time.Minute},      // 23:59 to 00:00 the next day
		{"0,59 0,23 * * 1", 59 * time.Minute}, // Mondays only: no next day
		{"0 9 * * 1,3,5", 48 * time.Hour},
		{"0 0 29 2 *", 48 * time.Hour},
	}
	for _, tt := range tests {
		c, err := schedule.ParseCron(tt.cron)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.MinInterval(); got != tt.want {
			t.Errorf("MinInterval(%q) = %s, want %s", tt.cron, got, tt.want)
		}
	}
}

// TestAdmit: a schedule that ticks more often than schedule.min_interval,
// or one past a worker's schedule.max_per_worker, is refused with the
// setting named; 0 lifts either bound.
func TestAdmit(t *testing.T) {
	settings := func(minInterval, maxPer string) func(domain.SettingSpec) string {
		return func(s domain.SettingSpec) string {
			switch s.Key {
			case schedule.MinIntervalSetting.Key:
				return minInterval
			case schedule.MaxPerWorkerSetting.Key:
				return maxPer
			}
			t.Fatalf("unexpected setting %s", s.Key)
			return ""
		}
	}
	defaults := settings(schedule.MinIntervalSetting.Default, schedule.MaxPerWorkerSetting.Default)
	tests := []struct {
		name     string
		cron     string
		made     int
		settings func(domain.SettingSpec) string
		wantErr  string
		wantIs   error
	}{
		{"every minute, by default", "* * * * *", 0, defaults, "", nil},
		{"every minute under a 5m bound", "* * * * *", 0, settings("5m", "10"),
			`transport.config.cron: "* * * * *" ticks as often as every 1m0s; a schedule may tick at most every 5m0s (the setting schedule.min_interval)`, domain.ErrInvalid},
		{"a gap across the hour under a 10m bound", "0,55 * * * *", 0, settings("10m", "10"), "ticks as often as every 5m0s", domain.ErrInvalid},
		{"every 5 minutes under a 5m bound", "*/5 * * * *", 0, settings("5m", "10"), "", nil},
		{"no interval bound", "* * * * *", 0, settings("0s", "10"), "", nil},
		{"the tenth", "0 8 * * *", 9, defaults, "", nil},
		{"the eleventh", "0 8 * * *", 10, defaults,
			"you have made 10 schedule streams, the most one worker may (the setting schedule.max_per_worker)", domain.ErrForbidden},
		{"no count bound", "0 8 * * *", 500, settings("1m", "0"), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := json.Marshal(schedule.StreamConfig{Cron: tt.cron})
			err := schedule.Transport.Admit(cfg, tt.made, tt.settings)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Admit = %v, want it admitted", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, tt.wantIs) {
				t.Fatalf("Admit = %v, want %q (%v)", err, tt.wantErr, tt.wantIs)
			}
		})
	}
}
