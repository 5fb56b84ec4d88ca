package engineapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
)

// ContainerAttach connects to a container's stdio. The engine answers
// 101 and the connection becomes the stream itself: stdout and stderr
// multiplexed as stdcopy reads them (unless the container has a TTY),
// and whatever is written goes to stdin; CloseWrite ends stdin. ctx
// bounds the handshake only, as with the docker client.
func (c *Client) ContainerAttach(ctx context.Context, id string, opts container.AttachOptions) (types.HijackedResponse, error) {
	id, err := pathID("container", id)
	if err != nil {
		return types.HijackedResponse{}, err
	}
	q := url.Values{}
	setFlag(q, "stream", opts.Stream)
	setFlag(q, "stdin", opts.Stdin)
	setFlag(q, "stdout", opts.Stdout)
	setFlag(q, "stderr", opts.Stderr)
	setFlag(q, "logs", opts.Logs)
	if opts.DetachKeys != "" {
		q.Set("detachKeys", opts.DetachKeys)
	}
	req, err := c.request(ctx, http.MethodPost, "/containers/"+id+"/attach", q, nil, "text/plain")
	if err != nil {
		return types.HijackedResponse{}, err
	}
	conn, mediaType, err := c.hijack(ctx, req)
	if err != nil {
		return types.HijackedResponse{}, fmt.Errorf("attach to container %s: %w", id, err)
	}
	if current, _ := c.atLeast(ctx, "1.42"); !current {
		mediaType = "" // older engines always say raw-stream
	}
	return types.NewHijackedResponse(conn, mediaType), nil
}

// hijack sends req on a connection of its own and, once the engine has
// switched protocols, hands the connection over.
func (c *Client) hijack(ctx context.Context, req *http.Request) (_ net.Conn, mediaType string, err error) {
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	raw, err := c.host.dialRaw(ctx, "", "")
	if err != nil {
		return nil, "", fmt.Errorf("cannot connect to the Docker daemon at %s (is it running?): %w", c.host, err)
	}
	defer func() {
		if err != nil {
			raw.Close()
		}
	}()
	// A long quiet run must not look like a dead peer to a middlebox.
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(30 * time.Second)
	}
	conn := raw
	if c.host.TLS != nil && c.host.Network == "tcp" {
		tc := tls.Client(raw, c.host.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, "", fmt.Errorf("TLS handshake with %s: %w", c.host, err)
		}
		conn = tc
	}
	// ctx bounds the exchange below: its end unblocks the reads and writes.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	br := bufio.NewReader(conn)
	resp, err := roundTrip(conn, br, req)
	if !stop() {
		return nil, "", ctx.Err()
	}
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return nil, "", errorOf(req, resp)
		}
		return nil, "", fmt.Errorf("the engine did not switch to a raw stream (status %d)", resp.StatusCode)
	}
	return &hijackedConn{Conn: conn, r: br, raw: raw}, resp.Header.Get("Content-Type"), nil
}

func roundTrip(conn net.Conn, br *bufio.Reader, req *http.Request) (*http.Response, error) {
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("send %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("read the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	return resp, nil
}

// hijackedConn is the attached stream: reads first drain what the HTTP
// exchange buffered, and CloseWrite half-closes the connection.
type hijackedConn struct {
	net.Conn
	r *bufio.Reader
	// raw is the socket under a TLS conn, or Conn itself.
	raw net.Conn
}

func (c *hijackedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite ends the container's stdin: the engine reads EOF once the
// socket's write side is shut. Over TLS the close_notify goes first.
func (c *hijackedConn) CloseWrite() error {
	if tc, ok := c.Conn.(*tls.Conn); ok {
		tc.CloseWrite()
	}
	if cw, ok := c.raw.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
