package server

import (
	"net/http/httptest"
	"testing"
)

// TestReasonRedactsSecrets: a refusal's answer that quotes a credential
// (an upstream provider's error relayed for an activation) is logged
// without it.
func TestReasonRedactsSecrets(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"unauthorized: missing bearer token\n", "unauthorized: missing bearer token"},
		{`{"error":{"message":"Incorrect API key provided: sk-proj-abc123***xyz"}}`, `{"error":{"message":"Incorrect API key provided: <redacted>"}}`},
		{"token hxo_AAAA-bbbb_CC is revoked", "token <redacted> is revoked"},
		{"token hxa_q1w2e3 expired", "token <redacted> expired"},
		{"slack said xoxb-123-456 is invalid", "slack said <redacted> is invalid"},
		{"a task-list is fine", "a task-list is fine"},
	} {
		r := &recorder{ResponseWriter: httptest.NewRecorder(), status: 401, reason: []byte(tc.body)}
		if got := r.reasonText(401); got != tc.want {
			t.Errorf("reasonText(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
