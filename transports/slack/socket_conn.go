package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/transport"
)

// socket is one Socket Mode connection.
type socket struct {
	m       *SocketMode
	conn    *websocket.Conn
	cfg     Config
	maxBody int
	hello   bool
}

// envelopeMsg is one Socket Mode message: hello, disconnect, or an
// envelope to acknowledge.
type envelopeMsg struct {
	Type         string          `json:"type"`
	EnvelopeID   string          `json:"envelope_id"`
	Payload      json.RawMessage `json:"payload"`
	RetryAttempt int             `json:"retry_attempt"`
	RetryReason  string          `json:"retry_reason"`
	Reason       string          `json:"reason"`
	NumConns     int             `json:"num_connections"`
}

func (c *socket) serve(ctx context.Context) transport.Ended {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs, errs := make(chan envelopeMsg, 16), make(chan error, 1)
	go c.read(ctx, msgs, errs)
	hello := time.NewTimer(HelloTimeout)
	defer hello.Stop()
	ping := time.NewTicker(c.m.pingInterval())
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return transport.Ended{Err: ctx.Err()}
		case err := <-errs:
			return c.ended(err)
		case <-hello.C:
			if !c.hello {
				return transport.Ended{Err: fmt.Errorf("no hello within %s", HelloTimeout)}
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, c.m.pingInterval())
			err := c.conn.Ping(pctx)
			pcancel()
			if err != nil {
				return c.ended(fmt.Errorf("no pong: %w", err))
			}
		case m := <-msgs:
			if e, done := c.handle(ctx, m); done {
				return e
			}
		}
	}
}

func (c *socket) read(ctx context.Context, msgs chan<- envelopeMsg, errs chan<- error) {
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			errs <- err
			return
		}
		var m envelopeMsg
		if err := json.Unmarshal(data, &m); err != nil {
			errs <- fmt.Errorf("slack sent a message that is not JSON: %w", err)
			return
		}
		select {
		case msgs <- m:
		case <-ctx.Done():
			return
		}
	}
}

// handle acts on one message; done says the connection is over.
func (c *socket) handle(ctx context.Context, m envelopeMsg) (transport.Ended, bool) {
	switch m.Type {
	case "hello":
		c.hello = true
		c.m.log().Info("slack socket mode connected", "connections", m.NumConns)
	case "disconnect":
		if m.Reason == "link_disabled" {
			return transport.Ended{Err: errors.New("socket mode is turned off for the app (link_disabled)"), Fatal: true}, true
		}
		return transport.Ended{Err: fmt.Errorf("slack asked to reconnect (%s)", m.Reason), Again: true, Ready: c.hello}, true
	case "events_api":
		return c.event(ctx, m)
	default:
		// Slash commands and interactions are not messages to a stream;
		// acknowledged so Slack does not resend them.
		if m.EnvelopeID != "" {
			c.m.log().Info("slack socket mode envelope not stored", "type", m.Type)
			return c.ack(ctx, m.EnvelopeID)
		}
	}
	return transport.Ended{}, false
}

// event stores what an events_api envelope carries, then acknowledges
// it. A failure to store leaves it unacknowledged: Slack sends it again.
func (c *socket) event(ctx context.Context, m envelopeMsg) (transport.Ended, bool) {
	b, err := parse(ctx, c.m.Store, c.cfg, m.Payload)
	if err == nil && len(b.Messages) > 0 {
		var rs []domain.Receipt
		rs, err = c.m.Store.AppendInbound(ctx, b.Messages, c.maxBody)
		for i, r := range rs {
			c.m.log().Info("inbound message stored", "stream", r.Event.StreamID, "event", r.Event.ID, "key", b.Messages[i].Key, "duplicate", r.Duplicate)
		}
	}
	switch {
	case errors.Is(err, domain.ErrInvalid):
		// Never storable: acknowledged, or Slack would resend it forever.
		c.m.log().Warn("slack event refused", "envelope", m.EnvelopeID, "err", err)
	case err != nil:
		c.m.log().Error("slack event not stored; left for Slack to resend", "envelope", m.EnvelopeID, "retry_attempt", m.RetryAttempt, "err", err)
		return transport.Ended{}, false
	case len(b.Messages) == 0:
		c.m.log().Debug("slack event not stored", "note", b.Note)
	}
	return c.ack(ctx, m.EnvelopeID)
}

func (c *socket) ack(ctx context.Context, id string) (transport.Ended, bool) {
	b, _ := json.Marshal(map[string]string{"envelope_id": id})
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if err := c.conn.Write(wctx, websocket.MessageText, b); err != nil {
		return transport.Ended{Err: fmt.Errorf("acknowledge %s: %w", id, err), Ready: c.hello}, true
	}
	return transport.Ended{}, false
}

func (c *socket) ended(err error) transport.Ended {
	return transport.Ended{Err: err, Ready: c.hello}
}
