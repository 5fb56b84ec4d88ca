package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/schedule"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestCronNext: the next occurrence, on the zone's wall clock, across DST
// changes, half-hour zones, leap days and the day-field OR rule.
func TestCronNext(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name, expr, zone, after, want string
	}{
		{"weekday 8:00 across the weekend", "0 8 * * 1-5", "Europe/London", "2026-03-06T08:00:00Z", "2026-03-09T08:00:00Z"},
		{"8:00 local is 07:00Z once BST starts", "0 8 * * 1-5", "Europe/London", "2026-03-27T08:00:00Z", "2026-03-30T07:00:00Z"},
		{"8:00 local is 08:00Z again after BST", "0 8 * * *", "Europe/London", "2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z"},
		{"a wall time the spring gap skips runs past the gap", "30 1 * * *", "Europe/London", "2026-03-28T02:00:00Z", "2026-03-29T01:30:00Z"},
		{"after it, the next day as usual", "30 1 * * *", "Europe/London", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"},
		{"a wall time the fall-back repeats runs once (first)", "30 1 * * *", "Europe/London", "2026-10-24T12:00:00Z", "2026-10-25T00:30:00Z"},
		{"and not again in the repeated hour", "30 1 * * *", "Europe/London", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
		{"New York midnight on Sundays", "0 0 * * 0", "America/New_York", "2026-03-02T00:00:00Z", "2026-03-08T05:00:00Z"},
		{"7 is Sunday too", "0 0 * * 7", "America/New_York", "2026-03-02T00:00:00Z", "2026-03-08T05:00:00Z"},
		{"a half-hour zone", "0 9 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", "2026-01-01T03:30:00Z"},
		{"names and steps", "*/20 9-17 * jan-mar mon-fri", "UTC", "2026-03-06T17:40:00Z", "2026-03-09T09:00:00Z"},
		{"a step from a start", "5/30 * * * *", "UTC", "2026-03-06T10:06:00Z", "2026-03-06T10:35:00Z"},
		{"lists", "0 6,18 * * *", "UTC", "2026-03-06T07:00:00Z", "2026-03-06T18:00:00Z"},
		{"29 February waits for a leap year", "0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"both day fields: either matches", "0 12 1 * fri", "UTC", "2026-03-02T00:00:00Z", "2026-03-06T12:00:00Z"},
		{"both day fields: the 1st though not a Friday", "0 12 1 * fri", "UTC", "2026-03-27T13:00:00Z", "2026-04-01T12:00:00Z"},
		{"strictly after", "0 8 * * *", "UTC", "2026-03-06T08:00:00Z", "2026-03-07T08:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := schedule.ParseCron(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Next(utc(tt.after), mustLoad(t, tt.zone))
			if !got.Equal(utc(tt.want)) {
				t.Errorf("Next(%s) = %s, want %s", tt.after, got.UTC().Format(time.RFC3339), tt.want)
			}
		})
	}
}

// TestStreamConfigErrors: create_stream refuses a bad schedule naming
// the field, and the cron field and value at fault.
func TestStreamConfigErrors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{`{}`, "transport.config.cron: is required"},
		{`{"cron":"* * * *"}`, `transport.config.cron: "* * * *" has 4 fields; want 5`},
		{`{"cron":"61 * * * *"}`, `field 1 (minute) "61": 61 is out of range 0-59`},
		{`{"cron":"0 24 * * *"}`, `field 2 (hour) "24": 24 is out of range 0-23`},
		{`{"cron":"*/0 * * * *"}`, `field 1 (minute) "*/0": step "0" must be a whole number of at least 1`},
		{`{"cron":"5-1 * * * *"}`, `range 5-1 runs backwards`},
		{`{"cron":"0 0 * foo *"}`, `field 4 (month) "foo": "foo" is not a number or a name (jan-dec)`},
		{`{"cron":"0 0 31 2 *"}`, `never fires`},
		{`{"cron":"0 8 * * *","timezone":"Mars/Olympus"}`, `transport.config.timezone: "Mars/Olympus" is not an IANA time zone`},
		{`{"cron":"0 8 * * *","tz":"UTC"}`, `unknown field "tz"`},
	} {
		err := schedule.Transport.Check([]byte(tt.config))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.config, err, tt.want)
		}
	}
	if err := schedule.Transport.Check([]byte(`{"cron":"0 8 * * MON-FRI","timezone":"Europe/London"}`)); err != nil {
		t.Errorf("a valid schedule is refused: %v", err)
	}
}
