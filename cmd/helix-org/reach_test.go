package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWarnNoServer: bootstrap and token create print links to the URL
// they were given; when that is the default (or HELIX_ORG_URL) and no
// helix-org server answers there, as after HELIX_ORG_ADDR=…:18437 make run,
// they still print them but warn on stderr what to pass. A --url given on
// purpose is taken as meant.
func TestWarnNoServer(t *testing.T) {
	db := tempDB(t)
	mustRun(t, "bootstrap", "--init", "--db", db, "--url", "http://127.0.0.1:1")
	live, _, _ := serveInProcess(t, openStore(t, db), io.Discard, serveConfig{})
	other := httptest.NewServer(http.NotFoundHandler()) // some other program on the port
	defer other.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	warning := func(url string) string {
		return "warning: no helix-org server answers at " + url + ", where the links above point: start one (helix-org serve), or if it listens elsewhere (HELIX_ORG_ADDR), point --url (or HELIX_ORG_URL) at it\n"
	}
	tests := []struct {
		name    string
		env     string
		args    []string
		printed string // the base URL the output links to
		stderr  string
	}{
		{"bootstrap, nothing there", dead, []string{"bootstrap"}, dead, warning(dead)},
		{"bootstrap, another program there", other.URL, []string{"bootstrap"}, other.URL, warning(other.URL)},
		{"bootstrap, the server there", live, []string{"bootstrap"}, live, ""},
		{"bootstrap --url is taken as meant", live, []string{"bootstrap", "--url", dead}, dead, ""},
		{"token create, nothing there", dead, []string{"token", "create", "w-owner"}, dead, warning(dead)},
		{"token create, the server there", live, []string{"token", "create", "w-owner"}, live, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELIX_ORG_URL", tt.env)
			out, stderr, err := run(t, "", append(tt.args, "--db", db)...)
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr)
			}
			if want := "MCP URL:   " + tt.printed + "/workers/w-owner/mcp\n"; !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr = %q\nwant     %q", stderr, tt.stderr)
			}
		})
	}
}
