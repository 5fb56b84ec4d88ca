package domain_test

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

func nested(n int, open, close string) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

func TestCheckJSONDepth(t *testing.T) {
	tooDeep := "x: is JSON nested more than 100 levels deep; the limit is 100"
	tests := []struct {
		name, json, want string
	}{
		{"flat", `{"a":1,"b":[1,2,3]}`, ""},
		{"at the limit", nested(100, "[", "]"), ""},
		{"objects at the limit", strings.Repeat(`{"a":`, 99) + "[]" + strings.Repeat("}", 99), ""},
		{"one past it", nested(101, "[", "]"), tooDeep},
		{"a thousand deep", `{"extra":` + nested(1000, "[", "]") + "}", tooDeep},
		{"brackets in strings do not count", `{"s":"` + nested(500, "[", "]") + `"}`, ""},
		{"escaped quotes do not end a string", `{"s":"\"` + nested(500, "{", "}") + `\\"}`, ""},
		{"an escaped backslash ends before the quote", `["\\",` + nested(101, "[", "]") + `]`, tooDeep},
		{"unterminated string", `["` + nested(200, "[", "]"), ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.CheckJSONDepth("x", []byte(tt.json))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckJSONDepth = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkCheckJSONDepth scans a 4 KB webhook-like payload.
func BenchmarkCheckJSONDepth(b *testing.B) {
	item := `{"id":12345,"name":"widget \"deluxe\"","tags":["a","b","c"],"owner":{"login":"octocat","site_admin":false}},`
	payload := []byte(`{"items":[` + strings.Repeat(item, 4096/len(item)) + `{}]}`)
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if err := domain.CheckJSONDepth("body", payload); err != nil {
			b.Fatal(err)
		}
	}
}
