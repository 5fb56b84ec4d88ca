package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SignatureHeader carries the HMAC-SHA256 of the body: "sha256=<hex>".
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value GitHub sends for body.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature reports whether header is the signature of body under
// secret. The comparison is constant-time; an empty secret never verifies.
func VerifySignature(secret string, body []byte, header string) bool {
	got, ok := ParseSignature(header)
	if secret == "" || !ok {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// ParseSignature decodes "sha256=<64 hex digits>", so a request without a
// well-formed signature is refused before its body is read.
func ParseSignature(header string) ([]byte, bool) {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, false
	}
	sig, err := hex.DecodeString(hexSig)
	return sig, err == nil
}
