package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
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
	if err := checkTime(sec, ts, now); err != nil {
		return nil, err
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

// checkTime refuses a timestamp more than Tolerance before or after now.
// It compares whole seconds, as Slack's documented check does: time.Unix
// wraps near the int64 limits and time.Duration saturates, which would
// report a far-future timestamp as 2562047h in the past.
func checkTime(sec int64, ts string, now time.Time) error {
	n, tol := now.Unix(), int64(Tolerance/time.Second)
	switch {
	case sec < n-tol:
		return inbound.Unauthorized("", "%s %s is %s before now, so it may be a replay; the tolerance is %s", HeaderTimestamp, ts, distance(n, sec), Tolerance)
	case sec > n+tol:
		return inbound.Unauthorized("", "%s %s is %s after now; the tolerance is %s", HeaderTimestamp, ts, distance(sec, n), Tolerance)
	}
	return nil
}

// distance is hi-lo seconds (hi > lo) as a time.Duration prints it, or
// in seconds past 272 years, where a time.Duration would overflow.
func distance(hi, lo int64) string {
	d := hi - lo
	switch {
	case d < 0: // wrapped: farther apart than int64 holds
		return "more than " + strconv.FormatInt(math.MaxInt64, 10) + "s"
	case d > 1<<33:
		return strconv.FormatInt(d, 10) + "s"
	}
	return (time.Duration(d) * time.Second).String()
}

func (v *verifier) Write(p []byte) (int, error) { return v.mac.Write(p) }

func (v *verifier) Verify() error {
	if !hmac.Equal([]byte("v0="+hex.EncodeToString(v.mac.Sum(nil))), v.want) {
		return inbound.Unauthorized("", "%s does not match the body", HeaderSignature)
	}
	return nil
}
