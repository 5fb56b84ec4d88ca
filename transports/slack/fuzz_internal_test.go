package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerify runs the Events API signature check on arbitrary headers and
// bodies: it must agree with refVerify, Slack's documented verification,
// on every input.
func FuzzVerify(f *testing.F) {
	const secret = "8f742231b10e8888abcd99ef00ff85a5"
	now := time.Unix(1_700_000_000, 0)
	sign := func(ts string, body string) string { return refSignature(secret, ts, []byte(body)) }
	f.Add("1700000000", sign("1700000000", `{"type":"event_callback"}`), []byte(`{"type":"event_callback"}`))
	f.Add("1699999701", sign("1699999701", "x"), []byte("x"))
	f.Add("1700000301", sign("1700000301", "x"), []byte("x"))
	f.Add("+1700000000", Sign(secret, now.Unix(), []byte("x")), []byte("x"))
	f.Add("+1700000000", sign("+1700000000", "x"), []byte("x"))
	f.Add("1700000000", "v0="+strings.ToUpper(strings.TrimPrefix(sign("1700000000", "x"), "v0=")), []byte("x"))
	f.Add("1700000000", "v0=ZZ", []byte(""))
	f.Add("-9223372036854775808", "v0=", []byte(""))
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		err := verify(secret, h, body, now)
		ref := refVerify(secret, h, body, now)
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

// refVerify is Slack's "Verifying requests from Slack", step by step: the
// timestamp within five minutes of now, "v0:" + timestamp + ":" + body
// signed with HMAC-SHA256 under the signing secret, and "v0=" + its hex
// digest compared with X-Slack-Signature.
func refVerify(secret string, h http.Header, body []byte, now time.Time) error {
	ts, sig := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("no timestamp")
	}
	if sec < now.Unix()-300 || sec > now.Unix()+300 {
		return errors.New("stale")
	}
	if !hmac.Equal([]byte(refSignature(secret, ts, body)), []byte(sig)) {
		return errors.New("signature mismatch")
	}
	return nil
}

func refSignature(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
