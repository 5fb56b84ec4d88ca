package slack

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/transports/inbound"
)

// TestCheckHeadersTimestamp: a timestamp outside Tolerance either way is
// refused with its true direction and distance, however absurd the number;
// one inside passes to the signature check.
func TestCheckHeadersTimestamp(t *testing.T) {
	tests := []struct {
		ts      string
		nanos   int64  // now is 1700000000 and this many nanoseconds
		wantErr string // "" when the headers pass
	}{
		{"1700000000", 0, ""},
		{"1699999700", 0, ""},
		{"1700000300", 0, ""},
		// Whole seconds, as Slack counts: 300.9s after the timestamp's
		// second is still within its five minutes.
		{"1699999700", 900_000_000, ""},
		{"1699999699", 0, "X-Slack-Request-Timestamp 1699999699 is 5m1s before now, so it may be a replay; the tolerance is 5m0s"},
		{"1700000301", 0, "X-Slack-Request-Timestamp 1700000301 is 5m1s after now; the tolerance is 5m0s"},
		{"99999999999", 0, "X-Slack-Request-Timestamp 99999999999 is 98299999999s after now; the tolerance is 5m0s"},
		{"9223372036854775807", 0, "X-Slack-Request-Timestamp 9223372036854775807 is 9223372035154775807s after now; the tolerance is 5m0s"},
		{"9223371974719179007", 0, "X-Slack-Request-Timestamp 9223371974719179007 is 9223371973019179007s after now; the tolerance is 5m0s"},
		{"-9223372036854775808", 0, "X-Slack-Request-Timestamp -9223372036854775808 is more than 9223372036854775807s before now, so it may be a replay; the tolerance is 5m0s"},
		{"0", 0, "X-Slack-Request-Timestamp 0 is 472222h13m20s before now, so it may be a replay; the tolerance is 5m0s"},
		{"9223372036854775808", 0, `X-Slack-Request-Timestamp "9223372036854775808" is not a Unix time in seconds`},
		{"1.7e9", 0, `X-Slack-Request-Timestamp "1.7e9" is not a Unix time in seconds`},
		{"", 0, "missing X-Slack-Signature or X-Slack-Request-Timestamp header; the body was not read"},
	}
	for _, tt := range tests {
		t.Run(tt.ts+"/"+strconv.FormatInt(tt.nanos, 10), func(t *testing.T) {
			h := http.Header{}
			h.Set(HeaderTimestamp, tt.ts)
			h.Set(HeaderSignature, "v0="+strings.Repeat("0", 64))
			_, err := checkHeaders("secret", h, time.Unix(1_700_000_000, tt.nanos))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, inbound.ErrUnauthorized) {
				t.Fatalf("error = %v, want %q (401)", err, tt.wantErr)
			}
		})
	}
}
