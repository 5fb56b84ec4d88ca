package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// Run keeps a session until ctx ends.
func (g *Gateway) Run(ctx context.Context) error {
	return transport.Loop[Config]{Store: g.Store, Setting: setting, Credential: func(c Config) string { return c.BotToken },
		Name: "discord gateway", Logger: g.log(), Backoff: g.Backoff, MaxBackoff: g.MaxBackoff, Connect: g.connect}.Run(ctx)
}

// connect runs one connection to its end. A refused token ends the
// session: the next one, with new settings, starts afresh.
func (g *Gateway) connect(ctx context.Context, cfg Config) transport.Ended {
	a := api{base: cfg.APIURL, token: cfg.BotToken, client: g.client()}
	url := g.sess.resumeURL
	if g.sess.id == "" || url == "" {
		var err error
		if url, err = a.gatewayURL(ctx); err != nil {
			var ae *apiError
			return transport.Ended{Err: err, Fatal: errors.As(err, &ae) && ae.Status == http.StatusUnauthorized}
		}
	}
	conn, _, err := websocket.Dial(ctx, gatewayQuery(url), &websocket.DialOptions{HTTPClient: g.client()})
	if err != nil {
		return transport.Ended{Err: err}
	}
	defer conn.CloseNow()
	conn.SetReadLimit(g.Store.IntSetting(ctx, MaxBodySetting))
	c := &connection{g: g, conn: conn, api: a, token: cfg.BotToken, maxBody: int(g.Store.IntSetting(ctx, MaxBodySetting))}
	e := c.serve(ctx)
	if e.Fatal {
		g.sess = session{}
	}
	return e
}

// gatewayQuery asks for version 10 in JSON, keeping the URL's own query.
func gatewayQuery(url string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "v=10&encoding=json"
}

func (g *Gateway) client() *http.Client { return transport.Client(g.Client) }

func (g *Gateway) log() *slog.Logger { return transport.Logger(g.Logger, "discord") }

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
