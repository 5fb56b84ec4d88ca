package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/helixml/helix-org/transports/transport"
)

// Intents are what the bot asks the Gateway for: messages in guilds
// (1<<9) and DMs (1<<12), with their text (MESSAGE_CONTENT, 1<<15).
const Intents = 1<<9 | 1<<12 | 1<<15

// Gateway holds the bot's Gateway session and stores the messages it
// brings. It connects once transport.discord has a bot token, and
// reconnects with backoff, resuming its session where Discord allows.
type Gateway struct {
	Store  transport.Store
	Client *http.Client
	Logger *slog.Logger
	// Backoff is the first wait after a connection fails, doubled up to
	// MaxBackoff (defaults 1s and 2m); a session that got going resets it.
	Backoff, MaxBackoff time.Duration

	sess    session
	parents map[string]string
}

// session is what a Resume needs: the seq is the last event committed.
type session struct {
	id, resumeURL, botID string
	seq                  int64
}

// payload is one Gateway message.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// The Gateway's opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// ended says how a connection ended and what to do next.
type ended struct {
	err error
	// fatal: Discord refused the token or the intents; wait for the
	// operator to change transport.discord.
	fatal bool
	// ready: the session got going, so the backoff starts over.
	ready bool
}

// Run keeps a session until ctx ends.
func (g *Gateway) Run(ctx context.Context) error {
	wait := g.backoff()
	for ctx.Err() == nil {
		changed := g.Store.Changed()
		raw, _ := g.Store.SettingOr(ctx, ConfigSetting)
		cfg, err := loadConfig(ctx, g.Store)
		switch {
		case err != nil:
			g.log().Error("discord gateway", "err", err)
			g.waitForChange(ctx, raw)
			continue
		case cfg.BotToken == "":
			waitOn(ctx, changed, 0)
			continue
		}
		e := g.connect(ctx, cfg)
		if ctx.Err() != nil {
			return nil
		}
		if e.fatal {
			g.log().Error("discord gateway refused the bot; waiting for transport.discord to change", "err", e.err)
			g.waitForChange(ctx, raw)
			continue
		}
		if e.ready {
			wait = g.backoff()
		}
		g.log().Warn("discord gateway connection ended", "err", e.err, "retry_in", wait, "resumable", g.sess.id != "")
		waitOn(ctx, nil, jitter(wait))
		wait = min(wait*2, g.maxBackoff())
	}
	return nil
}

// waitForChange returns once transport.discord differs from raw.
func (g *Gateway) waitForChange(ctx context.Context, raw string) {
	for ctx.Err() == nil {
		changed := g.Store.Changed()
		if now, _ := g.Store.SettingOr(ctx, ConfigSetting); now != raw {
			g.sess = session{}
			return
		}
		waitOn(ctx, changed, time.Minute)
	}
}

// connect runs one connection to its end.
func (g *Gateway) connect(ctx context.Context, cfg Config) ended {
	a := api{base: cfg.APIURL, token: cfg.BotToken, client: g.client()}
	url := g.sess.resumeURL
	if g.sess.id == "" || url == "" {
		var err error
		if url, err = a.gatewayURL(ctx); err != nil {
			var ae *apiError
			return ended{err: err, fatal: errors.As(err, &ae) && ae.Status == http.StatusUnauthorized}
		}
	}
	conn, _, err := websocket.Dial(ctx, gatewayQuery(url), &websocket.DialOptions{HTTPClient: g.client()})
	if err != nil {
		return ended{err: err}
	}
	defer conn.CloseNow()
	conn.SetReadLimit(g.Store.IntSetting(ctx, MaxBodySetting))
	c := &connection{g: g, conn: conn, api: a, token: cfg.BotToken, maxBody: int(g.Store.IntSetting(ctx, MaxBodySetting))}
	return c.serve(ctx)
}

// gatewayQuery asks for version 10 in JSON, keeping the URL's own query.
func gatewayQuery(url string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "v=10&encoding=json"
}

func (g *Gateway) backoff() time.Duration {
	if g.Backoff > 0 {
		return g.Backoff
	}
	return time.Second
}

func (g *Gateway) maxBackoff() time.Duration {
	if g.MaxBackoff > 0 {
		return g.MaxBackoff
	}
	return 2 * time.Minute
}

func (g *Gateway) client() *http.Client {
	if g.Client == nil {
		return http.DefaultClient
	}
	return g.Client
}

func (g *Gateway) log() *slog.Logger {
	if g.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Logger.With("component", "discord")
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
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// closeCode is the WebSocket close code of a read error, -1 for none.
func closeCode(err error) websocket.StatusCode { return websocket.CloseStatus(err) }

// fatalCodes are Gateway close codes no reconnect mends: authentication
// failed (4004), invalid shard or sharding required (4010, 4011), invalid
// API version (4012), invalid or disallowed intents (4013, 4014).
var fatalCodes = map[websocket.StatusCode]string{
	4004: "authentication failed: check transport.discord's bot_token",
	4010: "invalid shard", 4011: "sharding required", 4012: "invalid API version",
	4013: "invalid intents",
	4014: "disallowed intents: enable the Message Content intent for the bot in Discord's developer portal",
}

// freshCodes end the session itself: the next connection identifies anew
// (4007 invalid seq, 4009 session timed out).
var freshCodes = map[websocket.StatusCode]bool{4007: true, 4009: true}

func describeClose(err error) error {
	code := closeCode(err)
	if why, ok := fatalCodes[code]; ok {
		return fmt.Errorf("gateway closed %d: %s", code, why)
	}
	return err
}
