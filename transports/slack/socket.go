package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/transport"
)

// SocketMode holds a Socket Mode connection while transport.slack has an
// app_token: apps.connections.open gives a WebSocket URL; Slack says
// hello, then sends envelopes (events_api: the same event_callback the
// Events API POSTs) that are acknowledged with their envelope_id only
// once what they carry is committed, so Slack redelivers what was not
// (stored once by event_id). A disconnect (refresh_requested, warning)
// is followed by a new connection at once; a failure by one after a
// backoff.
type SocketMode struct {
	Store  transport.Store
	Client *http.Client
	Logger *slog.Logger
	// Backoff is the first wait after a connection fails, doubled up to
	// MaxBackoff (defaults 1s and 2m); a connection that got its hello
	// resets it.
	Backoff, MaxBackoff time.Duration
	// PingInterval is how often the connection is checked with a
	// WebSocket ping (default 30s); no pong within it ends the connection.
	PingInterval time.Duration
}

// Timeouts of a connection's start and of an acknowledgement.
const (
	HelloTimeout = 30 * time.Second
	writeTimeout = 10 * time.Second
)

// socketEnded says how a connection ended.
type socketEnded struct {
	err error
	// fatal: Slack refused the app token, or Socket Mode is off for the
	// app; wait for transport.slack to change.
	fatal bool
	// again: reconnect at once (Slack asked to).
	again bool
	hello bool
}

// Run keeps a connection until ctx ends.
func (s *SocketMode) Run(ctx context.Context) error {
	wait := s.backoff()
	for ctx.Err() == nil {
		changed := s.Store.Changed()
		raw, _ := s.Store.SettingOr(ctx, ConfigSetting)
		cfg, err := loadConfig(ctx, s.Store)
		if err != nil || cfg.AppToken == "" {
			if err != nil {
				s.log().Error("slack socket mode", "err", err)
			}
			waitOn(ctx, changed, 0)
			continue
		}
		e := s.connect(ctx, cfg)
		switch {
		case ctx.Err() != nil:
			return nil
		case e.fatal:
			s.log().Error("slack socket mode refused; waiting for transport.slack to change", "err", e.err)
			s.waitForChange(ctx, raw)
			continue
		case e.again:
			s.log().Info("slack socket mode reconnecting", "why", e.err)
			wait = s.backoff()
			continue
		case e.hello:
			wait = s.backoff()
		}
		s.log().Warn("slack socket mode connection ended", "err", e.err, "retry_in", wait)
		waitOn(ctx, nil, jitter(wait))
		wait = min(wait*2, s.maxBackoff())
	}
	return nil
}

func (s *SocketMode) waitForChange(ctx context.Context, raw string) {
	for ctx.Err() == nil {
		changed := s.Store.Changed()
		if now, _ := s.Store.SettingOr(ctx, ConfigSetting); now != raw {
			return
		}
		waitOn(ctx, changed, time.Minute)
	}
}

// connect opens one connection and serves it to its end.
func (s *SocketMode) connect(ctx context.Context, cfg Config) socketEnded {
	u, err := s.open(ctx, cfg)
	if err != nil {
		var refused *refusal
		return socketEnded{err: err, fatal: errors.As(err, &refused)}
	}
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: s.client()})
	if err != nil {
		return socketEnded{err: fmt.Errorf("slack socket mode dial: %w", err)}
	}
	defer conn.CloseNow()
	conn.SetReadLimit(s.Store.IntSetting(ctx, MaxBodySetting) + 64<<10)
	c := &socket{m: s, conn: conn, cfg: cfg, maxBody: int(s.Store.IntSetting(ctx, MaxBodySetting))}
	return c.serve(ctx)
}

// refusal is Slack refusing apps.connections.open for good.
type refusal struct{ error }

// open asks apps.connections.open for a WebSocket URL with the app token.
func (s *SocketMode) open(ctx context.Context, cfg Config) (string, error) {
	var ans struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		URL   string `json:"url"`
	}
	resp, out := delivery.Do(ctx, s.client(), delivery.Call{Name: "slack apps.connections.open", URL: strings.TrimRight(cfg.APIURL, "/") + "/apps.connections.open",
		Header: map[string]string{"Authorization": "Bearer " + cfg.AppToken, "Content-Type": "application/x-www-form-urlencoded"}}, &ans)
	if resp == nil {
		return "", out.Err
	}
	switch {
	case ans.OK && ans.URL != "":
		return ans.URL, nil
	case resp.StatusCode == http.StatusOK && isRefusal(ans.Error):
		return "", &refusal{fmt.Errorf("slack apps.connections.open: %s", ans.Error)}
	}
	return "", fmt.Errorf("slack apps.connections.open answered %d: %s", resp.StatusCode, cmp.Or(ans.Error, resp.Status))
}

// isRefusal: errors no retry mends, only a new token or app setting.
func isRefusal(e string) bool {
	switch e {
	case "invalid_auth", "not_authed", "not_allowed_token_type", "account_inactive", "token_revoked", "missing_scope", "forbidden_team":
		return true
	}
	return false
}

func (s *SocketMode) backoff() time.Duration {
	if s.Backoff > 0 {
		return s.Backoff
	}
	return time.Second
}

func (s *SocketMode) maxBackoff() time.Duration {
	if s.MaxBackoff > 0 {
		return s.MaxBackoff
	}
	return 2 * time.Minute
}

func (s *SocketMode) pingInterval() time.Duration {
	if s.PingInterval > 0 {
		return s.PingInterval
	}
	return 30 * time.Second
}

func (s *SocketMode) client() *http.Client {
	if s.Client == nil {
		return http.DefaultClient
	}
	return s.Client
}

func (s *SocketMode) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger.With("component", "slack-socket")
}

// waitOn waits for ctx, ch (nil: never) or d (0: forever).
func waitOn(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-ctx.Done():
	case <-ch:
	case <-after:
	}
}

// jitter spreads d over [d/2, d).
func jitter(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }
