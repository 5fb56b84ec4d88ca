package server_test

import (
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/webhook"
)

// outage is a server whose database can be taken away and given back.
type outage struct {
	h    *servertest.Harness
	ui   *http.Client
	fail func(t *testing.T)
	heal func(t *testing.T)
}

// TestUnavailable: while SQLite's disk is full or PostgreSQL cannot be
// reached, a webhook, an MCP call and a web UI action are answered 503
// (an MCP tool error when the failure is the call's own write), saying
// why, with Retry-After; once the database is back the same requests
// work, and everything stored before is still there.
func TestUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		start  func(t *testing.T) outage
		reason string
	}{
		{"sqlite disk full", diskFull, "temporarily unavailable: the database's disk is full; retry in a few seconds"},
		{"postgres down", postgresDown, "temporarily unavailable: the "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.start(t)
			owner := o.h.Owner(t)
			servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-hook", "name": "hook", "transport": map[string]any{"kind": "webhook"}})
			servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-hook"})
			for _, b := range []string{"kept 1", "kept 2"} {
				servertest.Call[any](t, owner, "publish", map[string]any{"stream": "s-hook", "body": b})
			}
			big := strings.Repeat("x", 200<<10) // more than the WAL holds already: it must grow
			csrf := csrfOf(t, o.ui, o.h.Server.URL)

			o.fail(t)
			requests := []struct {
				name string
				do   func() (int, http.Header, string)
			}{
				{"webhook", func() (int, http.Header, string) {
					return send(t, http.DefaultClient, http.MethodPost, o.h.Server.URL+"/webhooks/s-hook", "text/plain", big, nil)
				}},
				{"MCP publish", func() (int, http.Header, string) {
					body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"publish","arguments":{"stream":"s-hook","body":"` + big + `"}}}`
					return send(t, http.DefaultClient, http.MethodPost, o.h.URL("w-owner"), "application/json", body, http.Header{
						"Authorization": {"Bearer " + o.h.OwnerToken}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}})
				}},
				{"web UI publish", func() (int, http.Header, string) {
					form := url.Values{"stream": {"s-hook"}, "body": {big}, "next": {"/ui/streams/s-hook"}, "csrf": {csrf}}
					return send(t, o.ui, http.MethodPost, o.h.Server.URL+"/ui/act/publish", "application/x-www-form-urlencoded", form.Encode(),
						http.Header{"Origin": {o.h.Server.URL}})
				}},
			}
			for _, r := range requests {
				code, header, body := r.do()
				// A write that fails is a tool error over MCP, with the
				// HTTP answer 200; a request whose authentication cannot
				// read the database is a 503.
				t.Logf("%s: %d Retry-After=%q %s", r.name, code, header.Get("Retry-After"), excerpt(body))
				toolErr := code == 200 && strings.Contains(body, `"isError":true`)
				said := strings.Contains(body, tt.reason) || strings.Contains(body, html.EscapeString(tt.reason))
				if (code != 503 && !toolErr) || !said || (code == 503 && header.Get("Retry-After") != "10") {
					t.Errorf("%s while the database is out: %d (Retry-After %q) %.300s; want 503 with Retry-After 10, or a tool error, saying %q",
						r.name, code, header.Get("Retry-After"), body, tt.reason)
				}
			}

			o.heal(t)
			if code, _, body := requests[0].do(); code != 200 {
				t.Errorf("webhook once the database is back: %d %s", code, body)
			}
			servertest.Call[any](t, owner, "publish", map[string]any{"stream": "s-hook", "body": "after"})
			got := servertest.Call[struct{ Events []domain.Event }](t, owner, "read_events", map[string]any{"streams": []string{"s-hook"}})
			var bodies []string
			for _, ev := range got.Events {
				bodies = append(bodies, ev.Message.Body[:min(len(ev.Message.Body), 6)])
			}
			if strings.Join(bodies, "|") != "kept 1|kept 2|xxxxxx|after" {
				t.Errorf("the stream holds %q; want both kept events, the webhook sent after and the publish after", bodies)
			}
		})
	}
}

// diskFull serves a SQLite database on a 32 MiB tmpfs of its own, which a
// filler file fills and freeing it heals.
func diskFull(t *testing.T) outage {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=32m"); err != nil {
		t.Fatalf("mount a tmpfs (tests run as root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	// SQLite whatever HELIX_ORG_TEST_DB says: this is SQLite's disk.
	st, err := store.Open(t.Context(), filepath.Join(dir, "helix-org.db"), store.Options{Transports: servertest.Transports, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	filler := filepath.Join(dir, "filler")
	o := outage{h: startWithWebhooks(t, st)}
	o.ui = signedIn(t, o.h)
	o.fail = func(t *testing.T) {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for {
			if _, err := f.Write(chunk); errors.Is(err, syscall.ENOSPC) {
				return
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	o.heal = func(t *testing.T) {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// postgresDown serves a PostgreSQL database through a TCP proxy of the
// test's own, which stops (refusing connections and cutting those open)
// and starts again on the same port.
func postgresDown(t *testing.T) outage {
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{socket: filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432")}
	p.start(t, "127.0.0.1:0")
	st, err := store.Open(t.Context(), "postgres://postgres@"+p.addr+u.Path+"?sslmode=disable",
		store.Options{Transports: servertest.Transports, KeyFile: filepath.Join(t.TempDir(), "org.key"), NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o := outage{h: startWithWebhooks(t, st)}
	o.ui = signedIn(t, o.h)
	o.fail = func(*testing.T) { p.stop() }
	o.heal = func(t *testing.T) { p.start(t, p.addr) }
	return o
}

// pgProxy forwards TCP connections to PostgreSQL's socket.
type pgProxy struct {
	socket, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func (p *pgProxy) start(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	t.Cleanup(p.stop)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", p.socket)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// stop refuses new connections and cuts every open one.
func (p *pgProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func startWithWebhooks(t *testing.T, st *store.Store) *servertest.Harness {
	hook := webhook.Endpoint(st, nil)
	return servertest.StartWith(t, st, server.Config{Routes: []server.Route{{Pattern: hook.Pattern, Handler: hook.Handler(st, nil, nil)}}})
}

// signedIn is a web UI session of the owner, from a sign-in link: its
// page, then the POST its button sends.
func signedIn(t *testing.T, h *servertest.Harness) *http.Client {
	code, err := h.Store.CreateSignInCode(t.Context(), servertest.Token(t, h.Store, "w-owner"), store.SignInCodeTTL)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, _, page := send(t, c, http.MethodGet, h.Server.URL+"/ui/signin?code="+code, "", "", nil)
	form := url.Values{}
	for _, name := range []string{"csrf", "next", "code"} {
		_, rest, ok := strings.Cut(page, `name="`+name+`" value="`)
		v, _, _ := strings.Cut(rest, `"`)
		if !ok {
			t.Fatalf("the sign-in page has no %s field:\n%s", name, page)
		}
		form.Set(name, html.UnescapeString(v))
	}
	if status, _, body := send(t, c, http.MethodPost, h.Server.URL+"/ui/signin", "application/x-www-form-urlencoded", form.Encode(),
		http.Header{"Origin": {h.Server.URL}}); status != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", status, body)
	}
	return c
}

// csrfOf is the session's CSRF token, as a page carries it.
func csrfOf(t *testing.T, c *http.Client, base string) string {
	_, _, page := send(t, c, http.MethodGet, base+"/ui/streams/s-hook", "", "", nil)
	_, rest, ok := strings.Cut(page, `<meta name="csrf-token" content="`)
	tok, _, _ := strings.Cut(rest, `"`)
	if !ok || tok == "" {
		t.Fatalf("no CSRF token on the page:\n%.500s", page)
	}
	return tok
}

func send(t *testing.T, c *http.Client, method, url, contentType, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// excerpt is what an answer says, for the log: a JSON answer whole, a
// page's error message.
func excerpt(body string) string {
	for _, open := range []string{`<p class="error-text" role="alert">`, `<div class="flash error" role="alert">`} {
		if _, msg, ok := strings.Cut(body, open); ok {
			body, _, _ = strings.Cut(msg, "</")
		}
	}
	return body[:min(len(body), 300)]
}
