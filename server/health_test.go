package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

// TestHealthAndReady: /healthz answers while the process serves; /readyz
// only while the database takes a write and the dispatcher runs, naming
// what fails.
func TestHealthAndReady(t *testing.T) {
	for _, tc := range []struct {
		name        string
		dispatching func() bool
		closeDB     bool
		wantReady   int
		wantBody    string
	}{
		{"all well", func() bool { return true }, false, 200, `{"checks":{"database":"ok","dispatcher":"ok"},"status":"ready"}`},
		{"no dispatcher to check", nil, false, 200, `{"checks":{"database":"ok"},"status":"ready"}`},
		{"dispatcher stopped", func() bool { return false }, false, 503, `{"checks":{"database":"ok","dispatcher":"not running"},"status":"not ready"}`},
		{"database gone", func() bool { return true }, true, 503, `"database":"write the readiness probe: begin: sql: database is closed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := servertest.Start(t, server.Config{Dispatching: tc.dispatching})
			if tc.closeDB {
				h.Store.Close()
			}
			if code, body := get(t, h.Server.URL+"/healthz"); code != 200 || body != `{"status":"ok"}` {
				t.Errorf("/healthz = %d %s, want 200 ok", code, body)
			}
			if code, body := get(t, h.Server.URL+"/readyz"); code != tc.wantReady || !strings.Contains(body, tc.wantBody) {
				t.Errorf("/readyz = %d %s, want %d with %s", code, body, tc.wantReady, tc.wantBody)
			}
		})
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}
