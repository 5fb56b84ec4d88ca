package domain_test

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		name, args, want string
		extra            []string
	}{
		{"nothing secret", `{"stream":"s-news","body":"hi","tokens":5}`, `{"body":"hi","stream":"s-news","tokens":5}`, nil},
		{"secret keys at any depth", `{"auth":{"type":"bearer","token":"t1"},"list":[{"client_secret":"c","Private-Key":"k"}],"password":"p"}`,
			`{"auth":{"token":"[redacted]","type":"bearer"},"list":[{"Private-Key":"[redacted]","client_secret":"[redacted]"}],"password":"[redacted]"}`, nil},
		{"compounds but not plurals", `{"accessToken":"a","github_api_key":"g","Authorization":"x","softTokens":7,"inputTokens":8}`,
			`{"Authorization":"[redacted]","accessToken":"[redacted]","github_api_key":"[redacted]","inputTokens":8,"softTokens":7}`, nil},
		{"secret values whatever their key", `{"note":"hxo_abc","header":"Bearer xyz","sealed":"enc:v1:zz","plain":"hxo"}`,
			`{"header":"[redacted]","note":"[redacted]","plain":"hxo","sealed":"[redacted]"}`, nil},
		{"a transport's secret field", `{"transport":{"config":{"pin":"1234","to":"x"}}}`, `{"transport":{"config":{"pin":"[redacted]","to":"x"}}}`, []string{"pin"}},
		{"big numbers stay exact", `{"seq":12345678901234567890}`, `{"seq":12345678901234567890}`, nil},
		{"none", ``, `{}`, nil},
		{"not JSON", `{"token":`, `"[redacted]"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(domain.RedactArgs([]byte(tt.args), tt.extra)); got != tt.want {
				t.Errorf("RedactArgs(%s) = %s, want %s", tt.args, got, tt.want)
			}
		})
	}
}
