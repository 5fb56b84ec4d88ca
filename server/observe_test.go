package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
)

// TestAccessLog: with AccessLog every request is a line naming its route
// pattern (not the path's ids alone) and status; without it only refusals are.
func TestAccessLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		accessLog bool
		want      []string
		wantNot   []string
	}{
		{"on", true, []string{
			`level=INFO msg=request component=server method=GET route="GET /healthz" path=/healthz status=200 duration=`,
			`method=GET route=unmatched path=/nowhere status=404`,
		}, nil},
		{"off", false, nil, []string{"msg=request "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &servertest.Logs{}
			h := servertest.Start(t, server.Config{Logger: logs.Logger(), AccessLog: tc.accessLog})
			for _, path := range []string{"/healthz", "/nowhere"} {
				resp, err := http.Get(h.Server.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			h.Server.Close() // waits for the handlers, which log once they answer
			for _, want := range tc.want {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %s:\n%s", want, logs.String())
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(logs.String(), not) {
					t.Errorf("log has %s:\n%s", not, logs.String())
				}
			}
		})
	}
}
