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
