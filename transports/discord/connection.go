package discord

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/transport"
)

// HelloTimeout bounds the wait for the Gateway's Hello.
const HelloTimeout = 30 * time.Second

// connection is one WebSocket connection to the Gateway.
type connection struct {
	g       *Gateway
	conn    *websocket.Conn
	api     api
	token   string
	maxBody int
	acked   bool
	ready   bool
}

// serve says Hello, identifies or resumes, then heartbeats and handles
// what arrives until the connection ends.
func (c *connection) serve(ctx context.Context) transport.Ended {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reads, errs := make(chan payload, 16), make(chan error, 1)
	go c.read(ctx, reads, errs)
	interval, err := c.hello(ctx, reads, errs)
	if err != nil {
		return c.readEnded(err)
	}
	if err := c.start(ctx); err != nil {
		return transport.Ended{Err: err}
	}
	// The first heartbeat comes at a random point of the first interval,
	// as the Gateway asks, so reconnecting clients do not beat together.
	beat := time.NewTimer(time.Duration(rand.Float64() * float64(interval)))
	defer beat.Stop()
	c.acked = true
	for {
		select {
		case <-ctx.Done():
			return transport.Ended{Err: ctx.Err()}
		case err := <-errs:
			return c.readEnded(err)
		case p := <-reads:
			if e, done := c.handle(ctx, p); done {
				return e
			}
		case <-beat.C:
			if !c.acked {
				// A zombied connection: drop it (not with 1000, which
				// would end the session) and resume on a new one.
				return transport.Ended{Err: errors.New("no heartbeat ack since the last heartbeat"), Ready: c.ready}
			}
			c.acked = false
			if err := c.heartbeat(ctx); err != nil {
				return transport.Ended{Err: err, Ready: c.ready}
			}
			beat.Reset(interval)
		}
	}
}

func (c *connection) read(ctx context.Context, reads chan<- payload, errs chan<- error) {
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			errs <- err
			return
		}
		var p payload
		if err := json.Unmarshal(data, &p); err != nil {
			errs <- fmt.Errorf("gateway sent a payload that is not JSON: %w", err)
			return
		}
		select {
		case reads <- p:
		case <-ctx.Done():
			return
		}
	}
}

// hello waits for op 10 and returns its heartbeat interval.
func (c *connection) hello(ctx context.Context, reads <-chan payload, errs <-chan error) (time.Duration, error) {
	t := time.NewTimer(HelloTimeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case err := <-errs:
		return 0, err
	case <-t.C:
		return 0, fmt.Errorf("no Hello within %s", HelloTimeout)
	case p := <-reads:
		var d struct {
			HeartbeatInterval int64 `json:"heartbeat_interval"`
		}
		if p.Op != opHello || json.Unmarshal(p.D, &d) != nil || d.HeartbeatInterval <= 0 {
			return 0, fmt.Errorf("gateway's first payload is op %d, not a Hello with a heartbeat_interval", p.Op)
		}
		return time.Duration(d.HeartbeatInterval) * time.Millisecond, nil
	}
}

// start resumes the session when there is one, else identifies.
func (c *connection) start(ctx context.Context) error {
	s := c.g.sess
	if s.id != "" {
		return c.send(ctx, opResume, map[string]any{"token": c.token, "session_id": s.id, "seq": s.seq})
	}
	return c.send(ctx, opIdentify, map[string]any{"token": c.token, "intents": Intents,
		"properties": map[string]string{"os": "linux", "browser": "helix-org", "device": "helix-org"}})
}

// heartbeat sends the last sequence number committed (null before any).
func (c *connection) heartbeat(ctx context.Context) error {
	if c.g.sess.seq == 0 {
		return c.send(ctx, opHeartbeat, nil)
	}
	return c.send(ctx, opHeartbeat, c.g.sess.seq)
}

func (c *connection) send(ctx context.Context, op int, d any) error {
	b, _ := json.Marshal(map[string]any{"op": op, "d": d})
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.conn.Write(wctx, websocket.MessageText, b)
}

// handle acts on one payload; done says the connection is over.
func (c *connection) handle(ctx context.Context, p payload) (transport.Ended, bool) {
	switch p.Op {
	case opDispatch:
		if err := c.dispatch(ctx, p); err != nil {
			return transport.Ended{Err: err, Ready: c.ready}, true
		}
	case opHeartbeat:
		if err := c.heartbeat(ctx); err != nil {
			return transport.Ended{Err: err, Ready: c.ready}, true
		}
	case opHeartbeatAck:
		c.acked = true
	case opReconnect:
		return transport.Ended{Err: errors.New("the gateway asked to reconnect"), Ready: c.ready}, true
	case opInvalidSession:
		var resumable bool
		json.Unmarshal(p.D, &resumable)
		if !resumable {
			c.g.sess = session{}
		}
		// The Gateway asks for a wait of 1 to 5 seconds before the next
		// Identify (the backoff's base to five times it).
		wait := cmp.Or(c.g.Backoff, time.Second)
		transport.WaitOn(ctx, nil, wait+rand.N(4*wait))
		return transport.Ended{Err: fmt.Errorf("the gateway invalidated the session (resumable: %v)", resumable), Ready: c.ready}, true
	}
	return transport.Ended{}, false
}

// dispatch handles an event; its sequence number counts as received only
// once what it carries is committed, so a failure here makes the next
// Resume ask for it again.
func (c *connection) dispatch(ctx context.Context, p payload) error {
	switch p.T {
	case "READY":
		var d struct {
			SessionID        string `json:"session_id"`
			ResumeGatewayURL string `json:"resume_gateway_url"`
			User             struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		if err := json.Unmarshal(p.D, &d); err != nil || d.SessionID == "" {
			return errors.New("READY without a session_id")
		}
		c.g.sess = session{id: d.SessionID, resumeURL: d.ResumeGatewayURL, botID: d.User.ID}
		c.ready = true
		c.g.log().Info("discord gateway ready", "bot", d.User.ID)
	case "RESUMED":
		c.ready = true
		c.g.log().Info("discord gateway resumed", "seq", c.g.sess.seq)
	case "MESSAGE_CREATE":
		if err := c.store(ctx, p.D); err != nil {
			return fmt.Errorf("store message (seq %d): %w", p.S, err)
		}
	}
	if p.S > 0 {
		c.g.sess.seq = p.S
	}
	return nil
}

// store appends a message to the streams that follow it. A message the
// store refuses for good (ErrInvalid) is logged and passed over, so it
// cannot stall the session; any other failure ends the connection.
func (c *connection) store(ctx context.Context, raw json.RawMessage) error {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		c.g.log().Warn("discord message not understood", "err", err)
		return nil
	}
	if why := skip(m, c.g.sess.botID); why != "" {
		c.g.log().Debug("discord message not stored", "message", m.ID, "why", why)
		return nil
	}
	streams, err := c.g.Store.ListStreams(ctx, Kind)
	if err != nil {
		return err
	}
	in := route(ctx, streams, m, c.parentOf)
	if len(in) == 0 {
		return nil
	}
	rs, err := c.g.Store.AppendInbound(ctx, in, c.maxBody)
	if errors.Is(err, domain.ErrInvalid) {
		c.g.log().Warn("discord message refused", "message", m.ID, "err", err)
		return nil
	}
	for _, r := range rs {
		c.g.log().Info("inbound message stored", "stream", r.Event.StreamID, "event", r.Event.ID, "key", m.ID, "duplicate", r.Duplicate)
	}
	return err
}

// parentOf is the channel a thread is in: Discord's messages do not say,
// so the channel is asked for once (GET /channels/{id}) and remembered.
func (c *connection) parentOf(ctx context.Context, id string) string {
	if p, ok := c.g.parents[id]; ok {
		return p
	}
	var ch channel
	if err := c.api.do(ctx, http.MethodGet, "/channels/"+id, nil, &ch); err != nil {
		c.g.log().Warn("discord channel lookup", "channel", id, "err", err)
		return "" // not remembered: asked again next time
	}
	if c.g.parents == nil || len(c.g.parents) > 10000 {
		c.g.parents = map[string]string{}
	}
	if !ch.isThread() {
		ch.ParentID = ""
	}
	c.g.parents[id] = ch.ParentID
	return ch.ParentID
}

// readEnded turns a read error into how the connection ended.
func (c *connection) readEnded(err error) transport.Ended {
	code := closeCode(err)
	if freshCodes[code] {
		c.g.sess = session{}
	}
	_, fatal := fatalCodes[code]
	return transport.Ended{Err: describeClose(err), Fatal: fatal, Ready: c.ready}
}
