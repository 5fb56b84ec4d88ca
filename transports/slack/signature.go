package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/transports/inbound"
)

// Slack's signature headers.
const (
	HeaderSignature = "X-Slack-Signature"
	HeaderTimestamp = "X-Slack-Request-Timestamp"
	HeaderRetryNum  = "X-Slack-Retry-Num"
)

// Tolerance is how far X-Slack-Request-Timestamp may be from now, either
// way: older requests are refused as possible replays.
const Tolerance = 5 * time.Minute

// Sign is the X-Slack-Signature of body sent at timestamp:
// "v0=" + hex HMAC-SHA256 over "v0:{timestamp}:{body}".
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", timestamp)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// verifier checks one request's signature over the body as it is read.
type verifier struct {
	mac  hash.Hash
	want []byte // X-Slack-Signature as sent
}

// checkHeaders validates the headers alone — both present, the timestamp
// within Tolerance of now, a well-formed v0 signature — so a request that
// fails them is refused before its body is read.
func checkHeaders(secret string, h http.Header, now time.Time) (*verifier, error) {
	sig, ts := h.Get(HeaderSignature), h.Get(HeaderTimestamp)
	if sig == "" || ts == "" {
		return nil, inbound.Unauthorized("", "missing %s or %s header; the body was not read", HeaderSignature, HeaderTimestamp)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, inbound.Unauthorized("", "%s %q is not a Unix time in seconds", HeaderTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return nil, inbound.Unauthorized("", "%s is %s away from now; the tolerance is %s", HeaderTimestamp, d.Round(time.Second), Tolerance)
	}
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	digest, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(digest) != sha256.Size {
		return nil, inbound.Unauthorized("", "%s is not v0= and 64 hex digits", HeaderSignature)
	}
	// Compared as sent, as Slack's own SDKs do: the same digest in
	// upper-case hex is not the signature Slack sends.
	v := &verifier{mac: hmac.New(sha256.New, []byte(secret)), want: []byte(sig)}
	// Slack signs the header as sent ("v0:" + timestamp + ":" + body), so a
	// signature over "1700000000" must not pass for "+1700000000".
	fmt.Fprintf(v.mac, "v0:%s:", ts)
	return v, nil
}

func (v *verifier) Write(p []byte) (int, error) { return v.mac.Write(p) }

func (v *verifier) Verify() error {
	if !hmac.Equal([]byte("v0="+hex.EncodeToString(v.mac.Sum(nil))), v.want) {
		return inbound.Unauthorized("", "%s does not match the body", HeaderSignature)
	}
	return nil
}
