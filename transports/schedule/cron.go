package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed five-field cron expression — minute hour day-of-month
// month day-of-week — with ranges (1-5), lists (1,15), steps (*/15,
// 8-18/2) and names (jan-dec, sun-sat; 7 is Sunday too). As in Vixie
// cron, when both day fields are restricted a day matching either runs.
type Cron struct {
	minute, hour, dom, month, dow uint64 // bit i set: value i matches
	domStar, dowStar              bool
}

type field struct {
	name     string
	min, max int
	names    []string // names[i] is value min+i
}

var fields = []field{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// ParseCron parses an expression; errors name the field at fault.
func ParseCron(expr string) (Cron, error) {
	parts := strings.Fields(expr)
	if len(parts) != 5 {
		return Cron{}, fmt.Errorf("%q has %d fields; want 5: minute hour day-of-month month day-of-week", expr, len(parts))
	}
	var sets [5]uint64
	for i, p := range parts {
		set, err := fields[i].parse(p)
		if err != nil {
			return Cron{}, fmt.Errorf("field %d (%s) %q: %w", i+1, fields[i].name, p, err)
		}
		sets[i] = set
	}
	if sets[4]&(1<<7) != 0 { // 7 is Sunday
		sets[4] |= 1
	}
	return Cron{minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3], dow: sets[4] &^ (1 << 7),
		// As Vixie cron: a day field starting with "*" does not restrict.
		domStar: strings.HasPrefix(parts[2], "*"), dowStar: strings.HasPrefix(parts[4], "*")}, nil
}

func (f field) parse(s string) (uint64, error) {
	var set uint64
	for _, item := range strings.Split(s, ",") {
		bits, err := f.item(item)
		if err != nil {
			return 0, err
		}
		set |= bits
	}
	return set, nil
}

// item parses one list item: *, a, a-b, each optionally /step.
func (f field) item(s string) (uint64, error) {
	rng, stepText, hasStep := strings.Cut(s, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("step %q must be a whole number of at least 1", stepText)
		}
		step = n
	}
	lo, hi := f.min, f.max
	switch {
	case rng == "*":
		if f.name == "day of week" {
			hi = 6
		}
	default:
		a, b, isRange := strings.Cut(rng, "-")
		var err error
		if lo, err = f.value(a); err != nil {
			return 0, err
		}
		hi = lo
		if isRange {
			if hi, err = f.value(b); err != nil {
				return 0, err
			}
			if hi < lo {
				return 0, fmt.Errorf("range %s runs backwards", rng)
			}
		} else if hasStep {
			hi = f.max // "5/15" means 5-max/15
		}
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << v
	}
	return bits, nil
}

func (f field) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		if len(f.names) > 0 {
			return 0, fmt.Errorf("%q is not a number or a name (%s-%s)", s, f.names[0], f.names[len(f.names)-1])
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, f.min, f.max)
	}
	return v, nil
}

func (c Cron) dayMatches(t time.Time) bool {
	if c.month&(1<<int(t.Month())) == 0 {
		return false
	}
	dom, dow := c.dom&(1<<t.Day()) != 0, c.dow&(1<<int(t.Weekday())) != 0
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dow
	case c.dowStar:
		return dom
	}
	return dom || dow
}

// searchDays bounds the search for the next occurrence: eight years
// holds a 29 February even across 2100.
const searchDays = 8 * 366

// Next is the first occurrence strictly after t, computed on the wall
// clock of loc, so "0 8 * * *" is 08:00 local on both sides of a DST
// change; the zero time when the expression never matches. A wall time
// that a spring-forward gap skips runs at the same distance past the gap
// (02:30 in a 02:00→03:00 gap is 03:30); one that a fall-back repeats
// runs once, at its first occurrence.
func (c Cron) Next(t time.Time, loc *time.Location) time.Time {
	local := t.In(loc)
	y, m, d := local.Date()
	for i := 0; i < searchDays; i++ {
		day := time.Date(y, m, d+i, 12, 0, 0, 0, time.UTC) // the calendar day, free of any zone
		if !c.dayMatches(day) {
			continue
		}
		if next := c.onDay(day, t, loc); !next.IsZero() {
			return next
		}
	}
	return time.Time{}
}

// onDay is the first occurrence on the calendar day after t, or zero.
func (c Cron) onDay(day, after time.Time, loc *time.Location) time.Time {
	var best time.Time
	for h := 0; h < 24; h++ {
		if c.hour&(1<<h) == 0 {
			continue
		}
		for mi := 0; mi < 60; mi++ {
			if c.minute&(1<<mi) == 0 {
				continue
			}
			at := time.Date(day.Year(), day.Month(), day.Day(), h, mi, 0, 0, loc)
			if e := at.Add(-time.Hour); e.Hour() == h && e.Minute() == mi && e.Day() == at.Day() {
				at = e // a wall time a fall-back repeats: its first occurrence
			}
			if !at.After(after) || !best.IsZero() && !at.Before(best) {
				continue
			}
			best = at
			if at.Hour() == h && at.Minute() == mi {
				// A wall time that exists: every later one is later.
				return best
			}
		}
	}
	return best
}

// MinInterval is the shortest time between two occurrences on the wall
// clock: between two times of one day, or from a day's last to the
// next day's first when two days in a row match. A DST change may
// shorten one gap a year by its hour. Occurrences never on consecutive
// days and once a day answer 48h: "more than a day".
func (c Cron) MinInterval() time.Duration {
	var times []int // minutes past midnight
	for h := range 24 {
		for mi := range 60 {
			if c.hour&(1<<h) != 0 && c.minute&(1<<mi) != 0 {
				times = append(times, h*60+mi)
			}
		}
	}
	if len(times) == 0 {
		return 0
	}
	least := 48 * 60
	for i := 1; i < len(times); i++ {
		least = min(least, times[i]-times[i-1])
	}
	if c.consecutiveDays() {
		least = min(least, times[0]+24*60-times[len(times)-1])
	}
	return time.Duration(least) * time.Minute
}

// consecutiveDays reports whether two days in a row ever both match,
// over a span that holds every pattern of weekdays, month ends and leap
// days.
func (c Cron) consecutiveDays() bool {
	start := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	prev := false
	for i := range searchDays {
		m := c.dayMatches(start.AddDate(0, 0, i))
		if m && prev {
			return true
		}
		prev = m
	}
	return false
}
