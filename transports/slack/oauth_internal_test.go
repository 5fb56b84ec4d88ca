package slack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestState: a state is good for StateTTL, under the client secret it was
// made with, in the browser holding its nonce.
func TestState(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	nonce := []byte("0123456789abcdef")
	cookie := func(v string) *http.Request {
		r := httptest.NewRequest("GET", CallbackPath, nil)
		r.AddCookie(&http.Cookie{Name: stateCookie, Value: v})
		return r
	}
	good := sign(secret, nonce, now.Add(StateTTL))
	ours := cookie("MDEyMzQ1Njc4OWFiY2RlZg")
	for _, tt := range []struct {
		name   string
		r      *http.Request
		state  string
		secret string
		at     time.Time
		want   string
	}{
		{"good", ours, good, secret, now, ""},
		{"at the end of its time", ours, good, secret, now.Add(StateTTL), ""},
		{"expired", ours, good, secret, now.Add(StateTTL + time.Second), "took longer than 10m0s"},
		{"the secret changed", ours, good, strings.Repeat("f", 32), now, "not one this server made"},
		{"another nonce's cookie", cookie("b3RoZXI"), good, secret, now, "did not begin"},
		{"no cookie", httptest.NewRequest("GET", CallbackPath, nil), good, secret, now, "did not begin"},
		{"truncated", ours, good[:20], secret, now, "missing or malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &flow{now: func() time.Time { return tt.at }}
			err := f.checkState(tt.r, Config{ClientSecret: tt.secret}, tt.state)
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkState = %v, want %q", err, tt.want)
			}
		})
	}
}
