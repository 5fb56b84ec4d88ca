package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Run keeps a connection until ctx ends.
func (s *SocketMode) Run(ctx context.Context) error {
	return transport.Loop[Config]{Store: s.Store, Setting: setting, Credential: func(c Config) string { return c.AppToken },
		Name: "slack socket mode", Logger: s.log(), Backoff: s.Backoff, MaxBackoff: s.MaxBackoff, Connect: s.connect}.Run(ctx)
}

// connect opens one connection and serves it to its end.
func (s *SocketMode) connect(ctx context.Context, cfg Config) transport.Ended {
	u, err := s.open(ctx, cfg)
	if err != nil {
		var refused *refusal
		return transport.Ended{Err: err, Fatal: errors.As(err, &refused)}
	}
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: s.client()})
	if err != nil {
		return transport.Ended{Err: fmt.Errorf("slack socket mode dial: %w", err)}
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

func (s *SocketMode) pingInterval() time.Duration {
	if s.PingInterval > 0 {
		return s.PingInterval
	}
	return 30 * time.Second
}

func (s *SocketMode) client() *http.Client { return transport.Client(s.Client) }

func (s *SocketMode) log() *slog.Logger { return transport.Logger(s.Logger, "slack-socket") }
