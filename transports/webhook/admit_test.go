package webhook_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/webhook"
)

// TestAdmitPrivateOutbound: while transport.webhook.allow_private is off,
// a stream whose outbound_url is written as an address every delivery
// would be refused (or a localhost name) cannot be made, and the error
// names the field, the address and the command that allows it. A host
// name is left to the sender's dial-time check; with the setting on,
// all are admitted.
func TestAdmitPrivateOutbound(t *testing.T) {
	tests := []struct {
		name, url string
		allow     bool
		wantAt    string // the address the error names; "" admits
	}{
		{name: "public address", url: "https://93.184.215.14/hook"},
		{name: "public name", url: "https://example.com/hook"},
		{name: "name not resolved here", url: "http://intranet.example/hook"},
		{name: "loopback", url: "http://127.0.0.1:9000/hook", wantAt: "127.0.0.1"},
		{name: "IPv6 loopback", url: "http://[::1]:9000/hook", wantAt: "::1"},
		{name: "IPv4-mapped loopback", url: "http://[::ffff:127.0.0.1]/hook", wantAt: "::ffff:127.0.0.1"},
		{name: "private", url: "https://10.0.0.5/hook", wantAt: "10.0.0.5"},
		{name: "metadata", url: "http://169.254.169.254/latest", wantAt: "169.254.169.254"},
		{name: "unspecified", url: "http://0.0.0.0:8080/", wantAt: "0.0.0.0"},
		{name: "localhost", url: "http://localhost:9000/hook", wantAt: "localhost"},
		{name: "a localhost subdomain", url: "http://Hooks.Localhost./in", wantAt: "hooks.localhost"},
		{name: "LOCALHOST", url: "http://LOCALHOST:9000/hook", wantAt: "localhost"},
		{name: "a name under localhost", url: "http://foo.localhost/hook", wantAt: "foo.localhost"},
		{name: "loopback with a trailing dot", url: "http://127.0.0.1.:9000/hook", wantAt: "127.0.0.1"},
		// Spellings inet_aton(3), and so getaddrinfo and curl, read as an
		// address: the error names the address meant.
		{name: "two parts", url: "http://127.1/hook", wantAt: "127.0.0.1"},
		{name: "two parts, trailing dot", url: "http://127.1./hook", wantAt: "127.0.0.1"},
		{name: "three parts", url: "http://192.168.258/hook", wantAt: "192.168.1.2"},
		{name: "one hex number", url: "http://0x7f000001/hook", wantAt: "127.0.0.1"},
		{name: "one hex number, upper case", url: "http://0X7F000001/hook", wantAt: "127.0.0.1"},
		{name: "one decimal number", url: "http://2130706433:9000/hook", wantAt: "127.0.0.1"},
		{name: "octal part", url: "http://0177.0.0.1/hook", wantAt: "127.0.0.1"},
		{name: "octal with a leading zero netip refuses", url: "http://012.0.0.1/hook", wantAt: "10.0.0.1"},
		{name: "hex parts", url: "http://0xa9.0xfe.0xa9.0xfe/latest", wantAt: "169.254.169.254"},
		{name: "zero", url: "http://0/", wantAt: "0.0.0.0"},
		{name: "public address as one number", url: "http://1572394766/hook"},
		{name: "five parts is a name", url: "http://127.0.0.0.1/hook"},
		{name: "8 is no octal digit, so a name", url: "http://08.0.0.1/hook"},
		{name: "a part over 255 is a name", url: "http://256.0.0.1/hook"},
		{name: "a last part too wide is a name", url: "http://127.0.0.256/hook"},
		{name: "more than 32 bits is a name", url: "http://4294967296/hook"},
		{name: "loopback allowed", url: "http://127.0.0.1:9000/hook", allow: true},
		{name: "localhost allowed", url: "http://localhost:9000/hook", allow: true},
	}
	if webhook.Transport.Admit == nil {
		t.Fatal("the webhook transport has no Admit: every outbound_url is accepted at creation")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setting := func(s domain.SettingSpec) string {
				if s.Key == safedial.AllowPrivateSetting.Key {
					return map[bool]string{true: "true", false: "false"}[tt.allow]
				}
				return s.Default
			}
			cfg, _ := json.Marshal(webhook.Config{OutboundURL: tt.url})
			err := webhook.Transport.Admit(cfg, 0, setting)
			if tt.wantAt == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			want := "transport.config.outbound_url: " + tt.url + " is on " + tt.wantAt + ", a loopback, private or special-purpose address, which outbound webhooks may not reach while transport.webhook.allow_private is false: " +
				"every delivery would be refused. If you mean it, run `helix-org config set transport.webhook.allow_private true`, then create or update the stream"
			if !errors.Is(err, domain.ErrInvalid) || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
	if err := webhook.Transport.Admit(json.RawMessage(`{"secret":"whsec_x"}`), 0, func(domain.SettingSpec) string { return "" }); err == nil {
		t.Error("a config Check refuses was admitted")
	}
}
