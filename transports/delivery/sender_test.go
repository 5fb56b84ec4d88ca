package delivery_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
)

// TestDo: one call to a provider, whatever it answers, comes back as a
// response and an Outcome; what never got an answer says why without the
// URL or the secret in it.
func TestDo(t *testing.T) {
	const secret = "123456:SECRET-token"
	var got *http.Request
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		raw, _ := io.ReadAll(r.Body)
		body = string(raw)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(`{"ok":false,"error":"short_and_stout"}`))
	}))
	defer srv.Close()
	client := delivery.NewHTTP("test", nil, nil).Client
	tests := []struct {
		name       string
		call       delivery.Call
		wantStatus int
		wantErr    string // "" when an answer came
		wantBody   string
		wantType   string
	}{
		{"json body", delivery.Call{Name: "test json", URL: srv.URL + "/x", Body: map[string]string{"text": "hi"}},
			http.StatusTeapot, "", `{"text":"hi"}`, "application/json"},
		{"form body", delivery.Call{Name: "test form", URL: srv.URL + "/x", Form: map[string][]string{"code": {"c1"}}},
			http.StatusTeapot, "", "code=c1", "application/x-www-form-urlencoded"},
		{"a redirect is not followed", delivery.Call{Name: "test redirect", URL: srv.URL + "/redirect"},
			http.StatusFound, "", "", ""},
		{"unusable URL", delivery.Call{Name: "test bad", URL: "http://bad host/" + secret},
			0, "test bad: the configured api_url is not usable", "", ""},
		{"refused dial hides the secret", delivery.Call{Name: "test down", URL: "http://127.0.0.1:1/bot" + secret, Secret: secret},
			0, "test down: ", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, body = nil, ""
			var ans struct {
				Error string `json:"error"`
			}
			resp, out := delivery.Do(t.Context(), client, tt.call, &ans)
			if tt.wantErr != "" {
				if resp != nil || out.Err == nil || !strings.HasPrefix(out.Err.Error(), tt.wantErr) {
					t.Fatalf("response %v, outcome %+v; want none and an error starting %q", resp, out, tt.wantErr)
				}
				if strings.Contains(out.Err.Error(), secret) {
					t.Fatalf("error %q shows the secret", out.Err)
				}
				return
			}
			if resp == nil || resp.StatusCode != tt.wantStatus || out.Status != tt.wantStatus || out.Err != nil {
				t.Fatalf("response %v, outcome %+v; want status %d", resp, out, tt.wantStatus)
			}
			if body != tt.wantBody || got.Header.Get("Content-Type") != tt.wantType {
				t.Fatalf("sent %q as %q; want %q as %q", body, got.Header.Get("Content-Type"), tt.wantBody, tt.wantType)
			}
			if tt.wantStatus == http.StatusTeapot && ans.Error != "short_and_stout" {
				t.Fatalf("answer decoded as %+v", ans)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(90*time.Second).Unix(), 10)
	tests := []struct {
		name     string
		header   http.Header
		reset    string
		min, max time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"7"}}, "", 7 * time.Second, 7 * time.Second},
		{"reset time", http.Header{"X-Ratelimit-Reset": {reset}}, "X-RateLimit-Reset", 80 * time.Second, 90 * time.Second},
		{"reset header not read unless named", http.Header{"X-Ratelimit-Reset": {reset}}, "", 0, 0},
		{"nothing", http.Header{}, "RateLimit-Reset", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := delivery.RetryAfter(tt.header, tt.reset); d < tt.min || d > tt.max {
				t.Fatalf("RetryAfter = %v, want in [%v, %v]", d, tt.min, tt.max)
			}
		})
	}
}

// settings stands for a kind's decoded settings.
type settings struct{ token string }

func (s settings) Sendable() error { return delivery.Need("transport.test", "token", s.token) }

// TestReady: settings the operator must fix are retried; a stream config
// that cannot be read fails for good.
func TestReady(t *testing.T) {
	parse := func(raw json.RawMessage) (string, error) {
		if string(raw) != `{"ok":true}` {
			return "", domain.Invalid("config", "is not ok")
		}
		return "parsed", nil
	}
	good := domain.Stream{ID: "s-a", Transport: domain.Transport{Kind: "test", Config: json.RawMessage(`{"ok":true}`)}}
	bad := domain.Stream{ID: "s-b", Transport: domain.Transport{Kind: "test", Config: json.RawMessage(`{}`)}}
	tests := []struct {
		name          string
		cfg           settings
		loadErr       error
		st            domain.Stream
		wantErr       string
		wantPermanent bool
	}{
		{"ready", settings{"t"}, nil, good, "", false},
		{"settings unreadable", settings{"t"}, errors.New("transport.test cannot be used"), good, "cannot be used", false},
		{"no credential", settings{}, nil, good, "transport.test has no token: messages wait until it is set", false},
		{"bad stream config", settings{"t"}, nil, bad, "stream s-b: ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, out := delivery.Ready(tt.cfg, tt.loadErr, tt.st, parse)
			if tt.wantErr == "" {
				if out.Failed() || sc != "parsed" {
					t.Fatalf("Ready = %q, %+v", sc, out)
				}
				return
			}
			if out.Err == nil || !strings.Contains(out.Err.Error(), tt.wantErr) || out.Permanent != tt.wantPermanent {
				t.Fatalf("outcome %+v, want error containing %q, permanent %v", out, tt.wantErr, tt.wantPermanent)
			}
		})
	}
}
