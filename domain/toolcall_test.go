package domain_test

import (
	"encoding/json"
	"reflect"
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
		{"flat, spaced, every kind of value", " {\n \"z\" : -1.5e3 , \"b\":true,\"a\": null, \"to\":\"x\" }\t",
			`{"a":null,"b":true,"to":"x","z":-1.5e3}`, nil},
		{"flat with a secret key and value", `{"stream":"s","apiKey":"k","body":"Bearer t"}`, `{"apiKey":"[redacted]","body":"[redacted]","stream":"s"}`, nil},
		{"an escaped secret key", `{"\u0074oken":"t","body":"hi"}`, `{"body":"hi","token":"[redacted]"}`, nil},
		{"an escaped secret value", `{"body":"\u0068xo_abc"}`, `{"body":"[redacted]"}`, nil},
		{"markup as written", `{"body":"a<b & \"c\" é"}`, `{"body":"a<b & \"c\" é"}`, nil},
		{"markup as written, flat", `{"body":"a<b && c>d"}`, `{"body":"a<b && c>d"}`, nil},
		{"markup a client escaped, readable", `{"body":"a\u003cb \u0026 c","to":["w-a"]}`, `{"body":"a<b & c","to":["w-a"]}`, nil},
		{"a repeated key keeps the last", `{"body":"a","body":"hxo_b"}`, `{"body":"[redacted]"}`, nil},
		{"empty object", ` {} `, `{}`, nil},
		{"not an object", `["hxo_a",1]`, `["[redacted]",1]`, nil},
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

// BenchmarkRedactArgs is the audit's cost of a call's arguments: a
// publish's flat object, and one with a list, which is decoded.
func BenchmarkRedactArgs(b *testing.B) {
	for _, c := range []struct{ name, args string }{
		{"flat", `{"stream":"s-bench","body":"hello from the benchmark"}`},
		{"nested", `{"stream":"s-bench","body":"hello from the benchmark","to":["w-maya"]}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				domain.RedactArgs([]byte(c.args), []string{"pin", "signing_secret"})
			}
		})
	}
}

func TestReadableJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"html escapes", `{"content":"Reply \u003cbody\u003e \u0026 go"}`, `{"content":"Reply <body> & go"}`},
		{"upper-case hex", `["\u003C\u003E"]`, `["<>"]`},
		{"an escaped backslash stays", `["\\u003c"]`, `["\\u003c"]`},
		{"escaped quote", `{"a":"say \"\u003c\""}`, `{"a":"say \"<\""}`},
		{"other escapes kept", `["\u00e9\n\u2028"]`, `["\u00e9\n\u2028"]`},
		{"outside strings", `{"n":1}`, `{"n":1}`},
		{"cut short", `["\u00`, `["\u00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.ReadableJSON([]byte(tt.in))
			if got != tt.want {
				t.Errorf("ReadableJSON(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if json.Valid([]byte(tt.in)) {
				var a, b any
				json.Unmarshal([]byte(tt.in), &a)
				if err := json.Unmarshal([]byte(got), &b); err != nil || !reflect.DeepEqual(a, b) {
					t.Errorf("ReadableJSON(%s) = %s is another value (%v)", tt.in, got, err)
				}
			}
		})
	}
}
