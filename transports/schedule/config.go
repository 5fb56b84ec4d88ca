package schedule

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones work on a machine without tzdata installed

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/transport"
)

// Kind is the schedule transport's kind.
const Kind = domain.TransportSchedule

// Transport is the schedule transport, for cmd's list: no routes, no
// sender, a clock.
var Transport = transport.Descriptor{
	TransportSpec: domain.TransportSpec{
		Kind:  Kind,
		About: "a clock: one tick event per occurrence of a cron expression; only the clock writes to it",
		Config: `{"cron":"0 8 * * 1-5","timezone":"Europe/London","message":{"subject":"Morning summary","body":"Summarise yesterday's events."}}: ` +
			`minute hour day-of-month month day-of-week, with ranges, lists, steps and names; timezone an IANA zone, default UTC; ` +
			`message, optional, the subject and body every tick carries (by default the tick says only when it is)`,
		Check: func(raw json.RawMessage) error { _, err := ParseStreamConfig(raw); return err },
		// The ticks are the server's own clock, not outside input.
		Trusted: true,
		Admit:   admit,
	},
	Settings: Settings,
	Run: func(ctx context.Context, d transport.Deps) error {
		return (&Ticker{Store: d.Store, Now: d.Now, Logger: d.Logger}).Run(ctx)
	},
}

// StreamConfig is a schedule stream's config.
type StreamConfig struct {
	Cron     string `json:"cron"`
	Timezone string `json:"timezone,omitempty"`
	// Message, when set, is what every tick says: the work a follower is
	// woken for, so one clock can serve a role without a role per clock.
	Message *TickMessage `json:"message,omitempty"`
}

// TickMessage is the subject and body a schedule's ticks carry.
type TickMessage struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// Schedule is a parsed stream config.
type Schedule struct {
	StreamConfig
	cron Cron
	loc  *time.Location
}

// Next is the first occurrence strictly after t; zero for never.
func (s Schedule) Next(t time.Time) time.Time { return s.cron.Next(t, s.loc) }

// ParseStreamConfig decodes and checks a schedule stream's config,
// refusing an expression that never fires.
func ParseStreamConfig(raw json.RawMessage) (Schedule, error) {
	var s Schedule
	if err := domain.DecodeConfig(raw, &s.StreamConfig); err != nil {
		return s, err
	}
	if s.Cron == "" {
		return s, domain.Required(domain.ConfigField("cron"))
	}
	var err error
	if s.cron, err = ParseCron(s.Cron); err != nil {
		return s, domain.Invalid(domain.ConfigField("cron"), "%v", err)
	}
	if err := s.checkMessage(); err != nil {
		return s, err
	}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	if s.loc, err = time.LoadLocation(s.Timezone); err != nil {
		return s, domain.Invalid(domain.ConfigField("timezone"), "%q is not an IANA time zone such as \"Europe/London\"", s.Timezone)
	}
	if s.Next(time.Now()).IsZero() {
		return s, domain.Invalid(domain.ConfigField("cron"), "%q never fires (no such day)", s.Cron)
	}
	return s, nil
}

// checkMessage refuses a tick message that no tick could carry.
func (s Schedule) checkMessage() error {
	m := s.Message
	switch {
	case m == nil:
		return nil
	case strings.TrimSpace(m.Subject) == "" && strings.TrimSpace(m.Body) == "":
		return domain.Invalid(domain.ConfigField("message"), "needs a subject or a body (or leave message out for the plain tick)")
	case len(m.Subject) > domain.MaxSubject:
		return domain.Invalid(domain.ConfigField("message.subject"), "is %d bytes; at most %d", len(m.Subject), domain.MaxSubject)
	case len(m.Body) > domain.DefaultMaxBody-maxTickNote:
		return domain.Invalid(domain.ConfigField("message.body"), "is %d bytes; at most %d", len(m.Body), domain.DefaultMaxBody-maxTickNote)
	}
	return nil
}

// maxTickNote is room kept in a tick's body for what the ticker adds
// (when the tick is, the occurrences it stands for).
const maxTickNote = 1 << 10

// The bounds on what one worker may schedule: each tick may wake agents
// and spend the org's budget.
var (
	MinIntervalSetting = domain.SettingSpec{Key: "schedule.min_interval", Type: domain.SettingDuration, Default: "1m",
		Description: "Shortest time between two ticks of a schedule stream a worker creates; 0 is no bound.", Validate: nonNegative}
	MaxPerWorkerSetting = domain.SettingSpec{Key: "schedule.max_per_worker", Type: domain.SettingInt, Default: "10",
		Description: "Most schedule streams one worker may create; 0 or less is no bound."}
)

// Settings lists the schedule transport's config keys.
var Settings = domain.Settings{MinIntervalSetting, MaxPerWorkerSetting}

func nonNegative(v string) error {
	if d, err := time.ParseDuration(v); err == nil && d < 0 {
		return domain.Invalid("schedule.min_interval", "must not be negative")
	}
	return nil
}

// admit refuses a schedule that ticks more often than schedule.min_interval,
// and a worker's schedule past schedule.max_per_worker.
func admit(raw json.RawMessage, made int, setting func(domain.SettingSpec) string) error {
	s, err := ParseStreamConfig(raw)
	if err != nil {
		return err
	}
	if least, err := time.ParseDuration(setting(MinIntervalSetting)); err == nil && least > 0 {
		if every := s.cron.MinInterval(); every < least {
			return domain.Invalid(domain.ConfigField("cron"), "%q ticks as often as every %s; a schedule may tick at most every %s (the setting %s)",
				s.Cron, every, least, MinIntervalSetting.Key)
		}
	}
	if most, err := strconv.Atoi(setting(MaxPerWorkerSetting)); err == nil && most > 0 && made >= most {
		return domain.Forbidden("you have made %d schedule streams, the most one worker may (the setting %s)", made, MaxPerWorkerSetting.Key)
	}
	return nil
}
