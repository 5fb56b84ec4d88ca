package main

import (
	"errors"
	"strings"
	"testing"
)

// TestConnectError: what went wrong reaching the server is said in the
// operator's terms, judged by the status's text: a status code in a
// port of the error's URL says nothing.
func TestConnectError(t *testing.T) {
	const url = "http://127.0.0.1:40123/orgs/north/workers/w-owner/mcp"
	f := &clientFlags{URL: "http://127.0.0.1:40123", Worker: "w-owner"}
	tests := []struct {
		name, err, want string
	}{
		{"unauthorized", `calling "initialize": sending "initialize": Unauthorized`, url + " refused the token: unknown, expired or revoked"},
		{"forbidden", `calling "initialize": sending "initialize": Forbidden`, url + " refused the token: it is not w-owner's"},
		{"gone", `calling "initialize": sending "initialize": Gone`, url + " answers 410 Gone: org north is archived"},
		{"a port holding 401", `Post "http://127.0.0.1:40123/x": context deadline exceeded`, "connect to " + url + ": Post"},
		{"a port holding 403", `Post "http://127.0.0.1:40310/x": EOF`, "connect to " + url + ": Post"},
		{"a port holding 410", `Post "http://127.0.0.1:41000/x": EOF`, "connect to " + url + ": Post"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.connectError(url, errors.New(tt.err)).Error()
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("connectError(%q) = %q, want it to start %q", tt.err, got, tt.want)
			}
		})
	}
}
