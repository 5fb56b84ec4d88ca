package webhook_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/webhook"
)

// TestParseConfig: create_stream checks a webhook config with the same
// function the receiver and sender read it with; errors name the field.
func TestParseConfig(t *testing.T) {
	key := []byte("0123456789abcdef") // 16 bytes: the shortest key taken
	tests := []struct {
		name, config string
		wantErr      []string // nil: valid
	}{
		{"empty", `{}`, nil},
		{"padded base64", `{"secret":"whsec_` + base64.StdEncoding.EncodeToString(append(key, 'x')) + `"}`, nil},
		{"unpadded base64", `{"secret":"whsec_` + base64.RawStdEncoding.EncodeToString(append(key, 'x')) + `"}`, nil},
		{"outbound only", `{"outbound_url":"https://example.com/hook"}`, nil},
		{"no prefix", `{"secret":"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`, []string{"transport.config.secret", `must start with "whsec_"`}},
		{"prefix in capitals", `{"secret":"WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`, []string{"transport.config.secret", "whsec_"}},
		{"prefix alone", `{"secret":"whsec_"}`, []string{"transport.config.secret", "at least 16 bytes"}},
		{"prefix twice", `{"secret":"whsec_whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`, []string{"transport.config.secret", "not base64"}},
		{"url-safe alphabet", `{"secret":"whsec_` + strings.Repeat("-_", 12) + `"}`, []string{"transport.config.secret", "not base64"}},
		{"inner space", `{"secret":"whsec_MfKQ9r8G KYqrTwjUPD8ILPZIo2LaLaSw"}`, []string{"transport.config.secret", "not base64"}},
		{"key too short", `{"secret":"whsec_` + base64.StdEncoding.EncodeToString(key[:15]) + `"}`, []string{"transport.config.secret", "15-byte key"}},
		{"outbound_url not http", `{"outbound_url":"ftp://example.com"}`, []string{"transport.config.outbound_url", "http or https"}},
		{"typo", `{"secert":"whsec_x"}`, []string{"transport.config", `unknown field "secert"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Transport.Check(json.RawMessage(tt.config))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
