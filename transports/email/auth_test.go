package email

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newBasicAuthRequest(user, pass string) *http.Request {
	r := httptest.NewRequest("POST", "/email/postmark", nil)
	r.SetBasicAuth(user, pass)
	return r
}

func TestAuthorize(t *testing.T) {
	cfg := Config{InboundUser: "postmark", InboundPassword: "s3cret"}
	noAuth := httptest.NewRequest("POST", "/email/postmark", nil)
	cases := []struct {
		name string
		cfg  Config
		r    *http.Request
		ok   bool
	}{
		{"right pair", cfg, newBasicAuthRequest("postmark", "s3cret"), true},
		{"wrong password", cfg, newBasicAuthRequest("postmark", "s3cre7"), false},
		{"wrong user", cfg, newBasicAuthRequest("postmarc", "s3cret"), false},
		{"password as a prefix", cfg, newBasicAuthRequest("postmark", "s3cretX"), false},
		{"no auth header", cfg, noAuth, false},
		{"nothing configured refuses everyone", Config{}, newBasicAuthRequest("", ""), false},
		{"only a user configured", Config{InboundUser: "postmark"}, newBasicAuthRequest("postmark", ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := authorize(tc.cfg, tc.r); (err == nil) != tc.ok {
				t.Errorf("authorize = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestConfigRedacted: config get/list show transport.postmark without its
// secrets, and they are encrypted at rest.
func TestConfigRedacted(t *testing.T) {
	v := `{"server_token":"tok-1","from":"a@b.c","inbound_user":"pm","inbound_password":"pw-1"}`
	if !ConfigSetting.HasSecret() {
		t.Fatal("transport.postmark is not marked secret")
	}
	got := ConfigSetting.Redact(v)
	for _, s := range []string{"tok-1", "pw-1"} {
		if strings.Contains(got, s) {
			t.Errorf("redacted value %s shows %q", got, s)
		}
	}
	if !strings.Contains(got, `"from":"a@b.c"`) || !strings.Contains(got, `"inbound_user":"pm"`) {
		t.Errorf("redacted value %s hides what is not secret", got)
	}
}

func TestAliasAddress(t *testing.T) {
	cases := []struct{ inbound, want string }{
		{"451d9b70@inbound.postmarkapp.com", "451d9b70+sam@inbound.postmarkapp.com"},
		{"451d9b70+old@inbound.postmarkapp.com", "451d9b70+sam@inbound.postmarkapp.com"},
		{"", ""},
		{"no-at-sign", ""},
	}
	for _, tc := range cases {
		got, err := Config{InboundAddress: tc.inbound}.AliasAddress("sam")
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("AliasAddress(%q) = %q, %v; want %q", tc.inbound, got, err, tc.want)
		}
	}
}
