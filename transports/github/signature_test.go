package github

import (
	"strings"
	"testing"
)

func TestVerifySignature(t *testing.T) {
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	good := Sign("s3cret", body)
	cases := []struct {
		name   string
		secret string
		body   []byte
		header string
		want   bool
	}{
		{"valid", "s3cret", body, good, true},
		{"upper-case hex", "s3cret", body, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), true},
		{"missing", "s3cret", body, "", false},
		{"wrong secret", "other", body, good, false},
		{"body changed", "s3cret", append([]byte(" "), body...), good, false},
		{"sha1 header form", "s3cret", body, "sha1=" + strings.TrimPrefix(good, "sha256="), false},
		{"no prefix", "s3cret", body, strings.TrimPrefix(good, "sha256="), false},
		{"not hex", "s3cret", body, "sha256=zz", false},
		{"truncated", "s3cret", body, good[:len(good)-2], false},
		{"empty secret never verifies", "", body, Sign("", body), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifySignature(tc.secret, tc.body, tc.header); got != tc.want {
				t.Errorf("VerifySignature = %v, want %v", got, tc.want)
			}
		})
	}
}

// GitHub's documented test vector: secret "It's a Secret to Everybody",
// payload "Hello, World!".
func TestSignMatchesGitHubsExample(t *testing.T) {
	got := Sign("It's a Secret to Everybody", []byte("Hello, World!"))
	want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestConfigRedacted(t *testing.T) {
	got := ConfigSetting.Redact(`{"webhook_secret":"s3cret"}`)
	if strings.Contains(got, "s3cret") || !ConfigSetting.HasSecret() {
		t.Errorf("transport.github shows as %s", got)
	}
}
