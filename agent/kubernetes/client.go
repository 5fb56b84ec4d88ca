package kubernetes

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Client is the little of the Kubernetes API the runtime uses — Jobs,
// Secrets and Pods of one namespace at a time — over net/http and JSON.
// Not client-go: its packages' start-up (type registries, schemes, API
// machinery) made every start of the server a fifth slower, cluster or
// none, for nine requests.
type Client struct {
	server *url.URL
	hc     *http.Client
	// token is the bearer token of a request; nil when the client
	// authenticates with its certificate.
	token func() (string, error)
	// One budget of requests for the whole client, as the cluster sees one.
	limit *rate.Limiter
}

// clusterConfig is how to reach and authenticate to one apiserver.
type clusterConfig struct {
	Server     string
	CA         []byte // PEM; empty trusts the system's roots
	Insecure   bool   // insecure-skip-tls-verify
	ServerName string
	Proxy      string
	// CertPEM and KeyPEM are a client certificate.
	CertPEM, KeyPEM []byte
	// Token is a bearer token; TokenFile one read again for each request,
	// as a service account's is rotated in place.
	Token, TokenFile string
}

// The default (5 per second) would hold back a burst of activations.
const (
	clientQPS   = 50
	clientBurst = 100
)

func newClient(cfg clusterConfig) (*Client, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the cluster's server %q is not an http(s) URL", cfg.Server)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure, ServerName: cfg.ServerName} //nolint:gosec // only when the kubeconfig asks
	if len(cfg.CA) > 0 {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(cfg.CA) {
			return nil, errors.New("the cluster's certificate authority holds no PEM certificate")
		}
	}
	if len(cfg.CertPEM) > 0 || len(cfg.KeyPEM) > 0 {
		cert, err := tls.X509KeyPair(cfg.CertPEM, cfg.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("the client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tc, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 25, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
	if cfg.Proxy != "" {
		p, err := url.Parse(cfg.Proxy)
		if err != nil {
			return nil, fmt.Errorf("proxy-url: %w", err)
		}
		tr.Proxy = http.ProxyURL(p)
	}
	c := &Client{server: u, hc: &http.Client{Transport: tr}, limit: rate.NewLimiter(clientQPS, clientBurst)}
	switch {
	case cfg.TokenFile != "":
		c.token = func() (string, error) {
			b, err := readSmall(cfg.TokenFile)
			return strings.TrimSpace(string(b)), err
		}
	case cfg.Token != "":
		c.token = func() (string, error) { return cfg.Token, nil }
	}
	return c, nil
}

// Paths of the two API groups the runtime uses.
const (
	coreV1  = "/api/v1"
	batchV1 = "/apis/batch/v1"
)

func nsPath(group, ns, resource string, rest ...string) string {
	p := group + "/namespaces/" + url.PathEscape(ns) + "/" + resource
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

// send makes one request and returns the response to a 2xx; any other
// is the apiserver's Status as an *apiError.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte, contentType string) (*http.Response, error) {
	if err := c.limit.Wait(ctx); err != nil {
		return nil, err
	}
	u := *c.server
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "helix-org")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != nil {
		tok, err := c.token()
		if err != nil {
			return nil, fmt.Errorf("the cluster's token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, statusOf(resp)
	}
	return resp, nil
}

// statusOf reads a refusal: the Status the apiserver sends, or its code
// and the start of whatever else answered (a proxy, a load balancer).
func statusOf(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &apiError{}
	if json.Unmarshal(b, e) != nil || e.Message == "" && e.Reason == "" {
		e = &apiError{Message: strings.TrimSpace(string(b[:min(len(b), 200)]))}
	}
	if e.Code == 0 {
		e.Code = resp.StatusCode
	}
	return e
}

// call sends in as JSON (nil: no body) and decodes the answer into out
// (nil: drops it).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any, contentType string) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	resp, err := c.send(ctx, method, path, query, body, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: the answer does not decode: %w", method, path, err)
	}
	return nil
}

const jsonType = "application/json"

func (c *Client) getJob(ctx context.Context, ns, name string) (*job, error) {
	out := &job{}
	return out, c.call(ctx, http.MethodGet, nsPath(batchV1, ns, "jobs", name), nil, nil, out, "")
}

func (c *Client) createJob(ctx context.Context, ns string, in *job) (*job, error) {
	in.APIVersion, in.Kind = "batch/v1", "Job"
	out := &job{}
	return out, c.call(ctx, http.MethodPost, nsPath(batchV1, ns, "jobs"), nil, in, out, jsonType)
}

func (c *Client) watchJob(ctx context.Context, ns, name, resourceVersion string) (*watchStream, error) {
	q := url.Values{"watch": {"true"}, "fieldSelector": {"metadata.name=" + name}, "resourceVersion": {resourceVersion}}
	return c.watch(ctx, nsPath(batchV1, ns, "jobs"), q)
}

// deleteOptions asks for a Job's pods to go in the background.
var deleteOptions = map[string]string{"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}

func (c *Client) deleteJob(ctx context.Context, ns, name string) error {
	return c.call(ctx, http.MethodDelete, nsPath(batchV1, ns, "jobs", name), nil, deleteOptions, nil, jsonType)
}

func (c *Client) createSecret(ctx context.Context, ns string, s *secret) error {
	s.APIVersion, s.Kind = "v1", "Secret"
	return c.call(ctx, http.MethodPost, nsPath(coreV1, ns, "secrets"), nil, s, nil, jsonType)
}

func (c *Client) mergePatchSecret(ctx context.Context, ns, name string, patch json.RawMessage) error {
	return c.call(ctx, http.MethodPatch, nsPath(coreV1, ns, "secrets", name), nil, patch, nil, "application/merge-patch+json")
}

func (c *Client) deleteSecret(ctx context.Context, ns, name string) error {
	return c.call(ctx, http.MethodDelete, nsPath(coreV1, ns, "secrets", name), nil, nil, nil, "")
}

func (c *Client) listPods(ctx context.Context, ns, labelSelector string) (*podList, error) {
	out := &podList{}
	return out, c.call(ctx, http.MethodGet, nsPath(coreV1, ns, "pods"), url.Values{"labelSelector": {labelSelector}}, nil, out, "")
}

func (c *Client) watchPods(ctx context.Context, ns, labelSelector, resourceVersion string) (*watchStream, error) {
	q := url.Values{"watch": {"true"}, "labelSelector": {labelSelector}, "resourceVersion": {resourceVersion}}
	return c.watch(ctx, nsPath(coreV1, ns, "pods"), q)
}

// podLog follows one container's log: GET .../pods/<name>/log?follow=true.
func (c *Client) podLog(ctx context.Context, ns, pod, container string) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodGet, nsPath(coreV1, ns, "pods", pod, "log"), url.Values{"container": {container}, "follow": {"true"}}, nil, "")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// watchStream is a watch's answer: one JSON event after another, until
// the apiserver ends it or its context ends.
type watchStream struct {
	body io.ReadCloser
	dec  *json.Decoder
}

func (c *Client) watch(ctx context.Context, path string, q url.Values) (*watchStream, error) {
	resp, err := c.send(ctx, http.MethodGet, path, q, nil, "")
	if err != nil {
		return nil, err
	}
	return &watchStream{body: resp.Body, dec: json.NewDecoder(resp.Body)}, nil
}

// next is the watch's next event; an error when it has ended.
func (w *watchStream) next() (watchEvent, error) {
	var ev watchEvent
	err := w.dec.Decode(&ev)
	return ev, err
}

func (w *watchStream) stop() { w.body.Close() }

// Clients keeps one client per kubeconfig path, so that reading the
// settings per run (a `config set` applies to the next run) does not
// open new connections to the cluster for each.
type Clients struct {
	mu   sync.Mutex
	byKC map[string]*Client
}

// For is the client of the cluster a kubeconfig file names, or of the
// cluster the server runs in when path is empty.
func (c *Clients) For(path string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.byKC[path]; ok {
		return cl, nil
	}
	cfg, err := clusterOf(path)
	if err != nil {
		return nil, err
	}
	cl, err := newClient(cfg)
	if err != nil {
		if path == "" {
			return nil, fmt.Errorf("the in-cluster config: %w", err)
		}
		return nil, fmt.Errorf("%s %s: %w", KubeconfigSetting.Key, path, err)
	}
	if c.byKC == nil {
		c.byKC = map[string]*Client{}
	}
	c.byKC[path] = cl
	return cl, nil
}
