package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
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
var ErrSignature = errors.New("webhook signature verification failed")

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
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: missing %s, %s or %s header", ErrSignature, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a Unix time in seconds", ErrSignature, HeaderTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("%w: %s is %s away from now; the tolerance is %s", ErrSignature, HeaderTimestamp, d.Round(time.Second), Tolerance)
	}
	want := []byte(Sign(key, id, sec, body))
	for _, s := range strings.Split(sigs, " ") {
		if strings.HasPrefix(s, "v1,") && hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching v1 signature", ErrSignature)
}
