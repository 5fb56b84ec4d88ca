// Package schedule is a clock as a transport: a stream of kind "schedule"
// holds a cron expression and a time zone, and gets one tick event per
// occurrence, so a role can say "every weekday at 8, summarise
// yesterday" and be woken for it. Ticks are durable — the last one is
// the stream's latest event, so a restart neither repeats nor loses one —
// and occurrences missed while the server was down become one tick that
// says how many and since when. The cron parser is its own (cron.go):
// five fields, computed on the zone's wall clock.
package schedule
