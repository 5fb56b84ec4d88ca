package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helixml/helix-org/server"
)

// echoOrg answers with its name and the path it was given, redirects
// /go to /ui/ and sets a session cookie scoped to /ui/, as an org's
// real handlers do without knowing where they are mounted.
func echoOrg(name string) *server.Org {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /go", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "s", Value: name, Path: "/ui/"})
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(name + " " + r.URL.Path)) })
	return &server.Org{Handler: mux, Stop: func(context.Context) error { return nil }}
}

// TestOrgsMount: /orgs/<name>/… reaches that org with the prefix taken
// off and put back on its redirects and cookie paths; everything else is
// the default org's; an unknown or malformed name is a 404 that says so;
// an org is opened once however many requests arrive together.
func TestOrgsMount(t *testing.T) {
	var opened atomic.Int32
	orgs := &server.Orgs{Default: echoOrg("default"), Open: func(name string) (*server.Org, error) {
		switch name {
		case "broken":
			return nil, errors.New("open database /srv/secret/broken.db: disk I/O error")
		case "acme":
		default:
			return nil, server.ErrNoOrg
		}
		opened.Add(1)
		return echoOrg(name), nil
	}}
	hs := httptest.NewServer(orgs)
	defer hs.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		path, wantBody, wantLocation, wantCookie string
		wantStatus                               int
	}{
		{path: "/ui/", wantStatus: 200, wantBody: "default /ui/"},
		{path: "/orgs/acme/ui/streams", wantStatus: 200, wantBody: "acme /ui/streams"},
		{path: "/orgs/acme", wantStatus: 302, wantLocation: "/orgs/acme/"},
		{path: "/orgs/acme/go", wantStatus: 303, wantLocation: "/orgs/acme/ui/", wantCookie: "Path=/orgs/acme/ui/"},
		{path: "/go", wantStatus: 303, wantLocation: "/ui/", wantCookie: "Path=/ui/"},
		{path: "/orgs/ghost/ui/", wantStatus: 404, wantBody: "no org named ghost on this server: an operator creates it with `helix-org orgs create ghost`"},
		{path: "/orgs/Acme/ui/", wantStatus: 404, wantBody: `org: "Acme" is not an org name`},
		{path: "/orgs/broken/ui/", wantStatus: 503, wantBody: "org broken cannot be served now; the server's log says why\n"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := noRedirect.Get(hs.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body := string(b)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(body, tt.wantBody) || strings.Contains(body, "/srv/secret") {
				t.Errorf("GET %s: %d %q, want %d %q", tt.path, resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			if got := resp.Header.Get("Location"); got != tt.wantLocation {
				t.Errorf("GET %s: Location %q, want %q", tt.path, got, tt.wantLocation)
			}
			if got := resp.Header.Get("Set-Cookie"); !strings.Contains(got, tt.wantCookie) {
				t.Errorf("GET %s: Set-Cookie %q, want %q in it", tt.path, got, tt.wantCookie)
			}
		})
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if resp, err := http.Get(hs.URL + "/orgs/acme/x"); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := opened.Load(); n != 1 {
		t.Errorf("acme opened %d times, want once", n)
	}
	if err := orgs.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(hs.URL + "/orgs/acme/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("an org after shutdown: %d, want 503", resp.StatusCode)
	}
}

// archivable is an org whose archive mark the test sets, as `orgs
// archive` would in its database.
type archivable struct {
	org      *server.Org
	archived atomic.Bool
	mu       sync.Mutex
	changed  chan struct{}
	stopped  chan struct{} // closed as Stop begins
	hold     chan struct{} // Stop returns once it is closed: runs finishing
	closed   chan struct{} // closed by Close
}

func newArchivable(name string) *archivable {
	a := &archivable{changed: make(chan struct{}), stopped: make(chan struct{}), hold: make(chan struct{}), closed: make(chan struct{})}
	a.org = echoOrg(name)
	a.org.Stop = func(context.Context) error { close(a.stopped); <-a.hold; return nil }
	a.org.Close = func() { close(a.closed) }
	a.org.Archived = func(context.Context) (time.Time, bool, error) {
		return time.Date(2026, 12, 1, 17, 30, 0, 0, time.UTC), a.archived.Load(), nil
	}
	a.org.Changed = func() <-chan struct{} {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.changed
	}
	return a
}

// archive sets the mark and wakes those waiting for a settings change.
func (a *archivable) archive() {
	a.archived.Store(true)
	a.mu.Lock()
	defer a.mu.Unlock()
	close(a.changed)
	a.changed = make(chan struct{})
}

// TestOrgsArchive: an org archived while it is served is stopped and
// closed — found at a request, or with no request at all once its
// settings change — and from then on answers 410, saying since when and
// how to restore it; a restored org is opened again; the default org
// stays served throughout.
func TestOrgsArchive(t *testing.T) {
	var mu sync.Mutex
	current := map[string]*archivable{}
	archivedOnDisk := map[string]bool{}
	orgs := &server.Orgs{Default: echoOrg("default"), ArchiveCheck: time.Hour, ArchiveRecheck: -1, Open: func(name string) (*server.Org, error) {
		mu.Lock()
		defer mu.Unlock()
		if archivedOnDisk[name] {
			return nil, &server.ArchivedError{Since: time.Date(2026, 12, 1, 17, 30, 0, 0, time.UTC)}
		}
		a := newArchivable(name)
		current[name] = a
		return a.org, nil
	}}
	hs := httptest.NewServer(orgs)
	defer hs.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	archive := func(name string) *archivable {
		mu.Lock()
		defer mu.Unlock()
		archivedOnDisk[name] = true
		a := current[name]
		a.archive()
		return a
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not happen within 10s", what)
		}
	}
	const gone = "org acme was archived on 2026-12-01T17:30:00Z: nothing of it is served or runs, and its data is kept; an operator restores it with `helix-org orgs restore acme`"

	for _, path := range []string{"/orgs/acme/ui/", "/orgs/beta/ui/"} {
		if code, body := get(path); code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	}
	t.Run("at a request", func(t *testing.T) {
		mu.Lock()
		a := current["acme"]
		mu.Unlock()
		a.archived.Store(true) // no wake-up: the request itself asks
		mu.Lock()
		archivedOnDisk["acme"] = true
		mu.Unlock()
		// The request that finds it archived is served: the org's runs
		// reach their endpoints until they have ended.
		if code, body := get("/orgs/acme/workers/w-owner/mcp"); code != http.StatusOK {
			t.Errorf("the request that finds acme archived: %d %q, want it served", code, body)
		}
		wait(a.stopped, "acme's loops stopping")
		close(a.hold)
		wait(a.closed, "acme's database closing")
		if code, body := get("/orgs/acme/workers/w-owner/mcp"); code != http.StatusGone || !strings.Contains(body, gone) {
			t.Errorf("an archived org: %d %q, want 410 %q", code, body, gone)
		}
	})
	t.Run("with no request", func(t *testing.T) {
		b := archive("beta")
		wait(b.stopped, "beta's loops stopping")
		// While its runs finish, they (and anyone) still reach it.
		if code, body := get("/orgs/beta/workers/w-x/mcp"); code != http.StatusOK || body != "beta /workers/w-x/mcp" {
			t.Errorf("beta while its runs finish: %d %q, want it served", code, body)
		}
		close(b.hold)
		wait(b.closed, "beta's database closing")
		if code, _ := get("/orgs/beta/ui/"); code != http.StatusGone {
			t.Errorf("beta archived: %d, want 410", code)
		}
	})
	if code, body := get("/ui/"); code != http.StatusOK || body != "default /ui/" {
		t.Errorf("the default org while others are archived: %d %q", code, body)
	}
	t.Run("restored", func(t *testing.T) {
		mu.Lock()
		archivedOnDisk["acme"] = false
		mu.Unlock()
		if code, body := get("/orgs/acme/ui/"); code != http.StatusOK || body != "acme /ui/" {
			t.Errorf("acme restored: %d %q, want it served", code, body)
		}
	})
	mu.Lock()
	select { // the restored acme's runs end at once
	case <-current["acme"].hold:
	default:
		close(current["acme"].hold)
	}
	mu.Unlock()
	if err := orgs.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	orgs.Close()
}

// TestOrgsArchiveRecheck: requests to a busy org read its archive mark
// once per ArchiveRecheck, not once each; a mark read as archived is
// never trusted, and refuses every request after it.
func TestOrgsArchiveRecheck(t *testing.T) {
	tests := []struct {
		name      string
		recheck   time.Duration
		wantReads int32
	}{
		{"every request", -1, 20},
		{"once an hour", time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads atomic.Int32
			org := echoOrg("acme")
			org.Archived = func(ctx context.Context) (time.Time, bool, error) {
				if ctx.Done() != nil { // a request's, not the archive watch's, whose context never ends
					reads.Add(1)
				}
				return time.Time{}, false, nil
			}
			orgs := &server.Orgs{Default: echoOrg("default"), ArchiveCheck: time.Hour, ArchiveRecheck: tt.recheck,
				Open: func(string) (*server.Org, error) { return org, nil }}
			hs := httptest.NewServer(orgs)
			defer hs.Close()
			defer orgs.Close()
			for range 20 {
				resp, err := http.Get(hs.URL + "/orgs/acme/ui/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET: %d", resp.StatusCode)
				}
			}
			if got := reads.Load(); got != tt.wantReads {
				t.Errorf("20 requests read the archive mark %d times, want %d", got, tt.wantReads)
			}
		})
	}
}
