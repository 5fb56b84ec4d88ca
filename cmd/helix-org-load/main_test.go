package main

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var commitsLine = regexp.MustCompile(`commits: (\d+) writes in (\d+) commits`)

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestRunInProcess(t *testing.T) {
	for _, client := range []string{"sdk", "wire"} {
		t.Run(client, func(t *testing.T) {
			var out strings.Builder
			cfg := config{Stream: "s-load", Clients: 2, Calls: 3, Timeout: time.Minute, Client: client}
			if err := run(t.Context(), cfg, &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			for _, want := range []string{"in-process, fresh database, group commit", "in-process, fresh database, a commit per write",
				"2 " + client + " clients × 3 publish calls", "6 ok, 0 failed", "p50", "calls/s", "fsync:"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			// Each mode's writes: the 6 publishes and the audit's batches of
			// their records; a commit per write commits each alone.
			m := commitsLine.FindAllStringSubmatch(out.String(), -1)
			if len(m) != 2 {
				t.Fatalf("output has %d commits lines, want one per mode:\n%s", len(m), out.String())
			}
			for i, mode := range []string{"group commit", "a commit per write"} {
				writes, commits := atoi(m[i][1]), atoi(m[i][2])
				if writes < 6 || commits < 1 || commits > writes || i == 1 && commits != writes {
					t.Errorf("%s: %d writes in %d commits, want at least the 6 publishes, and a commit each with a commit per write", mode, writes, commits)
				}
			}
		})
	}
}

// TestWireClientFailsOnToolErrors: a wire client's call that the server
// refuses is a failed call, not a counted publish.
func TestWireClientFailsOnToolErrors(t *testing.T) {
	srv, err := startServer(t.Context(), commitModes[0].opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	c := newWireClient(srv.url, srv.token)
	if err := c.call(t.Context(), "publish", map[string]any{"stream": "s-missing", "body": "x"}); err == nil || !strings.Contains(err.Error(), "tool error") {
		t.Errorf("publish to a missing stream: %v, want a tool error", err)
	}
	bad := newWireClient(srv.url, "hxo_wrong")
	if err := bad.call(t.Context(), "publish", map[string]any{"stream": "s-load", "body": "x"}); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("with a wrong token: %v, want HTTP 401", err)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults start in-process", nil, ""},
		{"loopback url", []string{"-url", "http://127.0.0.1:8080/workers/w-owner/mcp", "-token", "t"}, ""},
		{"localhost url", []string{"-url", "http://localhost:8080/workers/w-owner/mcp", "-token", "t"}, ""},
		{"ipv6 loopback", []string{"-url", "http://[::1]:8080/workers/w-owner/mcp", "-token", "t"}, ""},
		{"url without token", []string{"-url", "http://127.0.0.1:8080/workers/w-owner/mcp"}, "needs -token"},
		{"remote host refused", []string{"-url", "http://10.0.0.5:8080/workers/w-owner/mcp", "-token", "t"}, "not a loopback"},
		{"remote name refused", []string{"-url", "https://example.com/workers/w-owner/mcp", "-token", "t"}, "not a loopback"},
		{"zero clients", []string{"-clients", "0"}, "at least 1"},
		{"wire client", []string{"-client", "wire"}, ""},
		{"unknown client", []string{"-client", "curl"}, "valid: sdk, wire"},
		{"soak", []string{"-soak", "20m", "-url", "http://127.0.0.1:8080/workers/w-owner/mcp", "-token", "t"}, ""},
		{"soak in-process", []string{"-soak", "20m"}, "-soak needs -url"},
		{"soak at no rate", []string{"-soak", "1m", "-rate", "0", "-url", "http://127.0.0.1:8080/workers/w-owner/mcp", "-token", "t"}, "-rate must be at least 1"},
		{"compare", []string{"-compare", "base=/tmp/a,head=/tmp/b", "-rounds", "3"}, ""},
		{"compare no rounds", []string{"-compare", "base=/tmp/a", "-rounds", "0"}, "-rounds must be at least 1"},
		{"remote metrics", []string{"-soak", "1m", "-metrics", "http://10.0.0.5:9090/metrics", "-url", "http://127.0.0.1:8080/workers/w-owner/mcp", "-token", "t"}, `-metrics: "10.0.0.5" is not a loopback address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, io.Discard)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
