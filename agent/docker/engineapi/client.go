// Package engineapi is the little of the Docker Engine API helix-org uses
// — containers, images, networks, builds, attach and events — over
// net/http and JSON, with the wire types of
// github.com/docker/docker/api/types. Not github.com/docker/docker/client:
// its packages' start-up (OpenTelemetry, reference grammars, errdefs) cost
// every start of the server, Docker in use or not. It must not import that
// client, nor anything of helix-org.
package engineapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/versions"
)

// MaxAPIVersion is the newest Engine API this client speaks: that of the
// api/types it is built with (api.DefaultVersion of docker v28.5).
const MaxAPIVersion = "1.51"

// fallbackAPIVersion is what an engine that names no version speaks, as
// the docker client assumes.
const fallbackAPIVersion = "1.24"

// maxBody bounds a JSON answer the client reads whole: an engine (or
// whatever answers on its address) cannot make it hold more.
const maxBody = 16 << 20

// Client speaks to one Docker Engine. It is safe for concurrent use.
type Client struct {
	host Host
	hc   *http.Client
	// base is the URL requests go to; its path is empty.
	base url.URL

	mu sync.Mutex
	// version is the API version requests use; fixed is whether it is
	// settled (pinned by DOCKER_API_VERSION, or negotiated).
	version string
	fixed   bool
}

// FromEnv builds a client from DOCKER_HOST, DOCKER_TLS_VERIFY,
// DOCKER_CERT_PATH and DOCKER_API_VERSION, as the docker CLI reads them.
// It does no I/O.
func FromEnv() (*Client, error) {
	h, err := HostFromEnv()
	if err != nil {
		return nil, err
	}
	return New(h)
}

// New builds a client for h. It does no I/O: the API version is
// negotiated by the first request unless h pins it.
func New(h Host) (*Client, error) {
	tr := &http.Transport{DialContext: h.dialRaw, TLSClientConfig: h.TLS, MaxIdleConnsPerHost: 10}
	base := url.URL{Scheme: "http", Host: h.Addr}
	switch h.Network {
	case "unix":
		// Any name will do over a socket; the engine ignores it.
		base.Host = "docker.sock"
	case "tcp":
		tr.DialContext = nil
		tr.Proxy = http.ProxyFromEnvironment
		if h.TLS != nil {
			base.Scheme = "https"
		}
	default:
		return nil, fmt.Errorf("docker host network %q: want unix or tcp", h.Network)
	}
	return &Client{host: h, hc: &http.Client{Transport: tr}, base: base, version: h.APIVersion, fixed: h.APIVersion != ""}, nil
}

// Close releases idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Version is the API version requests use now: the pin, the negotiated
// version, or MaxAPIVersion before negotiation.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == "" {
		return MaxAPIVersion
	}
	return c.version
}

// Ping asks the engine for its API version, and settles the client's on
// the older of the engine's and MaxAPIVersion unless it is pinned.
func (c *Client) Ping(ctx context.Context) (types.Ping, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/_ping", nil), nil)
	if err != nil {
		return types.Ping{}, err
	}
	resp, err := c.do(req)
	if err != nil {
		return types.Ping{}, err
	}
	defer drain(resp)
	p := types.Ping{APIVersion: resp.Header.Get("Api-Version"), OSType: resp.Header.Get("Ostype"),
		Experimental: resp.Header.Get("Docker-Experimental") == "true"}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		return p, errorOf(req, resp)
	}
	c.negotiated(p.APIVersion)
	return p, nil
}

// negotiated settles the version on the older of engine's and ours.
func (c *Client) negotiated(engine string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed {
		return
	}
	if engine == "" {
		engine = fallbackAPIVersion
	}
	c.version = MaxAPIVersion
	if versions.LessThan(engine, MaxAPIVersion) {
		c.version = engine
	}
	c.fixed = true
}

// apiVersion is the version to send a request with, negotiating it first
// if that has not happened yet. A failed negotiation is tried again by
// the next request.
func (c *Client) apiVersion(ctx context.Context) (string, error) {
	c.mu.Lock()
	fixed, v := c.fixed, c.version
	c.mu.Unlock()
	if fixed {
		return v, nil
	}
	if _, err := c.Ping(ctx); err != nil {
		return "", err
	}
	return c.Version(), nil
}

func (c *Client) url(path string, q url.Values) string {
	u := c.base
	u.Path = path
	u.RawQuery = q.Encode()
	return u.String()
}

// request builds a request to the versioned path /v<version>/<path>.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Request, error) {
	v, err := c.apiVersion(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url("/v"+v+path, q), body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "helix-org")
	return req, nil
}

// do sends a request, turning a failure to reach the engine into an error
// that says where it was looked for.
func (c *Client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("cannot connect to the Docker daemon at %s (is it running?): %w", c.host, err)
	}
	return resp, nil
}

// send makes one request and returns the response to a 2xx; any other
// status is the engine's message as an *Error.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	req, err := c.request(ctx, method, path, q, body, contentType)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer drain(resp)
		return nil, errorOf(req, resp)
	}
	return resp, nil
}

// call sends in as JSON (nil: no body) and decodes the answer into out
// (nil: drops it), reading at most maxBody bytes of it.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	contentType := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
		body, contentType = bytes.NewReader(b), "application/json"
	}
	resp, err := c.send(ctx, method, path, q, body, contentType)
	if err != nil {
		return err
	}
	defer drain(resp)
	if out == nil {
		return nil
	}
	return decode(resp.Body, out, method+" "+path)
}

// decode reads one JSON value of at most maxBody bytes.
func decode(r io.Reader, out any, what string) error {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", what, err)
	}
	if len(b) > maxBody {
		return fmt.Errorf("%s: the answer is over %d MiB", what, maxBody>>20)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: the answer does not decode: %w", what, err)
	}
	return nil
}

// drain reads a little of what is left, so the connection can be reused,
// and closes the body.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// pathID is an object's ID or name for a path, refusing an empty one,
// which would address the collection instead. URL.String escapes it.
func pathID(kind, id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", &Error{StatusCode: http.StatusNotFound, Message: "no such " + kind + ": an empty name or ID"}
	}
	return id, nil
}

// dialRaw connects to the engine's address, without TLS.
func (h Host) dialRaw(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, h.Network, h.Addr)
}
