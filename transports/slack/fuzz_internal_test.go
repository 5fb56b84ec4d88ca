package slack

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/slack/slacktest"
)

// FuzzVerify runs the Events API signature check on arbitrary headers and
// bodies: it must agree with slacktest.Verify, Slack's documented
// verification, on every input.
func FuzzVerify(f *testing.F) {
	const secret = "8f742231b10e8888abcd99ef00ff85a5"
	now := time.Unix(1_700_000_000, 0)
	sign := func(ts string, body string) string { return slacktest.Signature(secret, ts, []byte(body)) }
	f.Add("1700000000", sign("1700000000", `{"type":"event_callback"}`), []byte(`{"type":"event_callback"}`))
	f.Add("1699999701", sign("1699999701", "x"), []byte("x"))
	f.Add("1700000301", sign("1700000301", "x"), []byte("x"))
	f.Add("+1700000000", Sign(secret, now.Unix(), []byte("x")), []byte("x"))
	f.Add("+1700000000", sign("+1700000000", "x"), []byte("x"))
	f.Add("1700000000", "v0="+strings.ToUpper(strings.TrimPrefix(sign("1700000000", "x"), "v0=")), []byte("x"))
	f.Add("1700000000", "v0=ZZ", []byte(""))
	f.Add("-9223372036854775808", "v0=", []byte(""))
	f.Add("9223372036854775807", sign("9223372036854775807", "x"), []byte("x"))
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		err := verify(secret, h, body, now)
		ref := slacktest.Verify(secret, h, body, now)
		if (err == nil) != (ref == nil) {
			t.Fatalf("verify = %v but Slack's verification says %v", err, ref)
		}
	})
}

func verify(secret string, h http.Header, body []byte, now time.Time) error {
	v, err := checkHeaders(secret, h, now)
	if err != nil {
		return err
	}
	v.Write(body)
	return v.Verify()
}
