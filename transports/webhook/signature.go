package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helixml/helix-org/transports/inbound"
)

// Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far webhook-timestamp may be from now, either way.
const Tolerance = 5 * time.Minute

// ErrSignature is wrapped by every verification failure (answered 401).
var ErrSignature error = &inbound.AuthError{Err: errors.New("webhook signature verification failed")}

// Key decodes a "whsec_<base64>" secret into its HMAC key.
func Key(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, errors.New(`webhook secret must start with "whsec_"`)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		// Tolerate unpadded keys; anything else is a misconfigured stream.
		if key, err = base64.RawStdEncoding.DecodeString(raw); err != nil {
			return nil, fmt.Errorf("webhook secret is not base64 after \"whsec_\": %w", err)
		}
	}
	return key, nil
}

// Sign returns the "v1,<base64 HMAC-SHA256>" signature of id.timestamp.body.
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte("."))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a request's Standard Webhooks headers against body: the
// three headers present, the timestamp within Tolerance of now, and one of
// the space-separated v1 signatures matching, compared in constant time.
func Verify(key []byte, h http.Header, body []byte, now time.Time) error {
	v, err := Check(key, h, now)
	if err != nil {
		return err
	}
	v.Write(body)
	return v.Verify()
}

// Verifier checks one request's signature over a body it is fed while the
// body is read, so the body is never read twice and never read at all
// when the headers alone fail.
type Verifier struct {
	mac  hash.Hash
	sigs []string
}

// Check validates the headers alone — present, the timestamp within
// Tolerance of now, at least one v1 signature — and returns the Verifier
// to write the body to.
func Check(key []byte, h http.Header, now time.Time) (*Verifier, error) {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return nil, fmt.Errorf("%w: missing %s, %s or %s header", ErrSignature, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q is not a Unix time in seconds", ErrSignature, HeaderTimestamp, ts)
	}
	if err := checkTime(sec, ts, now); err != nil {
		return nil, err
	}
	v := &Verifier{mac: hmac.New(sha256.New, key)}
	for _, s := range strings.Split(sigs, " ") {
		if strings.HasPrefix(s, "v1,") {
			v.sigs = append(v.sigs, s)
		}
	}
	if len(v.sigs) == 0 {
		return nil, fmt.Errorf("%w: %s has no v1 signature", ErrSignature, HeaderSignature)
	}
	// The signed content holds the header as sent, not the number parsed
	// from it: "+1700000000" and "1700000000" name one second but are
	// different content, and a signature over one must not pass for the other.
	fmt.Fprintf(v.mac, "%s.%s.", id, ts)
	return v, nil
}

// checkTime reports a timestamp outside Tolerance of now, in seconds so no
// value overflows a time.Duration, and names the unit of one that is far
// too large to be seconds (a sender's milliseconds, say).
func checkTime(sec int64, ts string, now time.Time) error {
	if unit := largeUnit(sec); unit != "" {
		return fmt.Errorf("%w: %s %s is not in seconds since the epoch (it looks like %s)", ErrSignature, HeaderTimestamp, ts, unit)
	}
	// Compared, not subtracted: now minus an extreme sec overflows. The
	// distance between two int64s fits a uint64.
	n, tol := now.Unix(), int64(Tolerance/time.Second)
	switch {
	case sec < n-tol:
		return fmt.Errorf("%w: %s is %s before now; the tolerance is %s", ErrSignature, HeaderTimestamp, seconds(uint64(n)-uint64(sec)), Tolerance)
	case sec > n+tol:
		return fmt.Errorf("%w: %s is %s after now; the tolerance is %s", ErrSignature, HeaderTimestamp, seconds(uint64(sec)-uint64(n)), Tolerance)
	}
	return nil
}

// seconds prints d seconds as a time.Duration does, or as seconds when it
// would overflow one (more than 272 years).
func seconds(d uint64) string {
	if d > 1<<33 {
		return strconv.FormatUint(d, 10) + "s"
	}
	return (time.Duration(d) * time.Second).String()
}

// largeUnit names the unit a timestamp too large for seconds (past the
// year 5000) seems to be in, or is "" for one that may be seconds.
func largeUnit(sec int64) string {
	if sec < 0 {
		sec = -sec // math.MinInt64 stays negative: seconds, far away
	}
	switch {
	case sec >= 1e17:
		return "nanoseconds"
	case sec >= 1e14:
		return "microseconds"
	case sec >= 1e11:
		return "milliseconds"
	}
	return ""
}

// Write feeds body bytes to the signature; it never fails.
func (v *Verifier) Write(p []byte) (int, error) { return v.mac.Write(p) }

// Verify reports whether one of the v1 signatures matches the body
// written, compared in constant time.
func (v *Verifier) Verify() error {
	want := []byte("v1," + base64.StdEncoding.EncodeToString(v.mac.Sum(nil)))
	for _, s := range v.sigs {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching v1 signature", ErrSignature)
}
