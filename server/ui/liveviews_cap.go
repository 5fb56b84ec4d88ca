package ui

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// LiveViewsPerSessionSetting and LiveViewsMaxSetting cap the live views
// (server-sent event streams) a server holds open: each holds a
// connection, a goroutine and its share of every commit's fan-out, and
// 800 from one session once took a server from 114 to 468 MiB and an MCP
// call from 0.03 s to 11 s.
var (
	LiveViewsPerSessionSetting = domain.SettingSpec{Key: "ui.live_views_per_session", Type: domain.SettingInt, Default: "20", Validate: atLeastOne,
		Description: "Most live views (open pages that update themselves) one web UI session may hold on this server; past it they are refused with 429."}
	LiveViewsMaxSetting = domain.SettingSpec{Key: "ui.live_views_max", Type: domain.SettingInt, Default: "500", Validate: atLeastOne,
		Description: "Most live views this server holds open for all sessions together; past it they are refused with 429 and Retry-After."}
)

// atLeastOne refuses a cap that would refuse every live view.
func atLeastOne(v string) error {
	if n, err := strconv.Atoi(v); err == nil && n < 1 {
		return domain.Invalid("value", "must be at least 1 (%d would refuse every live view)", n)
	}
	return nil
}

// liveCount counts the live views open on this server, by session.
type liveCount struct {
	mu        sync.Mutex
	total     int
	bySession map[string]int
}

// errTooManyLive is a live view refused by a cap; retry says whether
// waiting helps (the server's cap) or closing the session's own pages
// does.
type errTooManyLive struct {
	msg   string
	retry bool
}

func (e *errTooManyLive) Error() string { return e.msg }

// open counts one more live view of session, or refuses it past either
// cap; the returned function closes it.
func (c *liveCount) open(session string, perSession, most int64) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySession == nil {
		c.bySession = map[string]int{}
	}
	switch {
	case int64(c.bySession[session]) >= perSession:
		return nil, &errTooManyLive{msg: fmt.Sprintf("too many live views: this session has %d open, the most %s allows; close a page or two (each live page holds one)",
			c.bySession[session], LiveViewsPerSessionSetting.Key)}
	case int64(c.total) >= most:
		return nil, &errTooManyLive{retry: true, msg: fmt.Sprintf("too many live views: the server has %d open, the most %s allows; try again later",
			c.total, LiveViewsMaxSetting.Key)}
	}
	c.total++
	c.bySession[session]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.total--
		if c.bySession[session]--; c.bySession[session] <= 0 {
			delete(c.bySession, session)
		}
	}, nil
}
