package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// secret is the streams' signing secret in this package's tests.
const secret = "whsec_c2VjcmV0LWtleS1mb3ItdGVzdHMtMTIzNDU2Nzg="

const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specBody   = `{"test": 2432232314}`
)

// TestSignSpecVector is the Standard Webhooks libraries' own test vector.
func TestSignSpecVector(t *testing.T) {
	key, err := webhook.Key(specSecret)
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign(key, specID, 1614265330, []byte(specBody))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	signed := func(at time.Time) http.Header { return webhooktest.Sign(specSecret, specID, at, []byte(specBody)) }
	with := func(h http.Header, k, v string) http.Header {
		h = h.Clone()
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
		return h
	}
	valid := signed(now).Get(webhook.HeaderSignature)
	other := webhooktest.Sign("whsec_"+"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB", specID, now, []byte(specBody)).Get(webhook.HeaderSignature)
	tests := []struct {
		name   string
		header http.Header
		body   string
		ok     bool
	}{
		{"valid", signed(now), specBody, true},
		{"valid, 4m59s old", signed(now.Add(-4*time.Minute - 59*time.Second)), specBody, true},
		{"valid, 4m59s ahead", signed(now.Add(4*time.Minute + 59*time.Second)), specBody, true},
		{"one of several signatures matches", with(signed(now), webhook.HeaderSignature, other+" v1a,AAAA "+valid+" v2,x"), specBody, true},
		{"stale: 5m01s old", signed(now.Add(-5*time.Minute - time.Second)), specBody, false},
		{"future: 5m01s ahead", signed(now.Add(5*time.Minute + time.Second)), specBody, false},
		{"body tampered", signed(now), `{"test": 2432232315}`, false},
		{"signed with another secret", with(signed(now), webhook.HeaderSignature, other), specBody, false},
		{"id changed", with(signed(now), webhook.HeaderID, "msg_other"), specBody, false},
		{"timestamp changed", with(signed(now), webhook.HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10)), specBody, false},
		{"missing id", with(signed(now), webhook.HeaderID, ""), specBody, false},
		{"missing timestamp", with(signed(now), webhook.HeaderTimestamp, ""), specBody, false},
		{"missing signature", with(signed(now), webhook.HeaderSignature, ""), specBody, false},
		{"timestamp not a number", with(signed(now), webhook.HeaderTimestamp, "yesterday"), specBody, false},
		{"timestamp in milliseconds", with(signed(now), webhook.HeaderTimestamp, strconv.FormatInt(now.UnixMilli(), 10)), specBody, false},
		{"unversioned signature", with(signed(now), webhook.HeaderSignature, valid[3:]), specBody, false},
		{"wrong version", with(signed(now), webhook.HeaderSignature, "v2,"+valid[3:]), specBody, false},
		{"empty entries only", with(signed(now), webhook.HeaderSignature, "   "), specBody, false},
	}
	key, _ := webhook.Key(specSecret)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(key, tt.header, []byte(tt.body), now)
			if tt.ok && err != nil {
				t.Errorf("Verify: %v, want ok", err)
			}
			if !tt.ok && !errors.Is(err, webhook.ErrSignature) {
				t.Errorf("Verify: %v, want ErrSignature", err)
			}
			// The reference verification agrees on every row.
			if ref := webhooktest.Verify(specSecret, tt.header, []byte(tt.body), now); (ref == nil) != tt.ok {
				t.Errorf("reference verification: %v, want ok=%v", ref, tt.ok)
			}
		})
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		secret string
		ok     bool
	}{
		{specSecret, true},
		{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", true}, // unpadded
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false},
		{"whsec_not base64!!", false},
	}
	for _, tt := range tests {
		if _, err := webhook.Key(tt.secret); (err == nil) != tt.ok {
			t.Errorf("Key(%q) err = %v, want ok=%v", tt.secret, err, tt.ok)
		}
	}
}

// TestVerifyTimestampSaysWhy: a timestamp out of tolerance says how far
// off it is, and one in another unit says so instead of overflowing.
func TestVerifyTimestampSaysWhy(t *testing.T) {
	now := time.Unix(1_764_620_000, 0)
	key, _ := webhook.Key(specSecret)
	tests := []struct {
		ts, want string
	}{
		{"1764620000000", "webhook-timestamp 1764620000000 is not in seconds since the epoch (it looks like milliseconds)"},
		{"1764620000000000", "webhook-timestamp 1764620000000000 is not in seconds since the epoch (it looks like microseconds)"},
		{"1764620000000000000", "webhook-timestamp 1764620000000000000 is not in seconds since the epoch (it looks like nanoseconds)"},
		{"-1764620000000", "webhook-timestamp -1764620000000 is not in seconds since the epoch (it looks like milliseconds)"},
		{"1764619000", "webhook-timestamp is 16m40s before now; the tolerance is 5m0s"},
		{"1764621000", "webhook-timestamp is 16m40s after now; the tolerance is 5m0s"},
		{"0", "webhook-timestamp is 490172h13m20s before now; the tolerance is 5m0s"},
		{"99999999999", "webhook-timestamp is 98235379999s after now; the tolerance is 5m0s"},
		{"-9223372036854775808", "webhook-timestamp is 9223372038619395808s before now; the tolerance is 5m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.ts, func(t *testing.T) {
			h := webhooktest.Sign(specSecret, specID, now, []byte(specBody))
			h.Set(webhook.HeaderTimestamp, tt.ts)
			err := webhook.Verify(key, h, []byte(specBody), now)
			if !errors.Is(err, webhook.ErrSignature) || !strings.HasSuffix(err.Error(), ": "+tt.want) {
				t.Errorf("Verify: %v, want ErrSignature ending %q", err, tt.want)
			}
		})
	}
}
