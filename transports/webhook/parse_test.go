package webhook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/webhook"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		want                    domain.Message
		wantErr                 error
	}{
		{"plain text", "text/plain; charset=utf-8", "hello", domain.Message{Body: "hello", BodyContentType: "text/plain; charset=utf-8"}, nil},
		{"no content type", "", "hello", domain.Message{Body: "hello"}, nil},
		{"JSON also parsed into extra", "application/json", "{\n  \"a\": [1, 2]\n}",
			domain.Message{Body: "{\n  \"a\": [1, 2]\n}", BodyContentType: "application/json", Extra: []byte(`{"a":[1,2]}`)}, nil},
		{"+json suffix", "application/cloudevents+json; charset=utf-8", `{"type":"x"}`,
			domain.Message{Body: `{"type":"x"}`, BodyContentType: "application/cloudevents+json; charset=utf-8", Extra: []byte(`{"type":"x"}`)}, nil},
		{"form fields into extra", "application/x-www-form-urlencoded", "name=Ada+Lovelace&topic=a&topic=b",
			domain.Message{Body: "name=Ada+Lovelace&topic=a&topic=b", BodyContentType: "application/x-www-form-urlencoded",
				Extra: []byte(`{"name":"Ada Lovelace","topic":["a","b"]}`)}, nil},
		{"unparseable content type kept as text", "text/;;", "hi", domain.Message{Body: "hi", BodyContentType: "text/;;"}, nil},
		{"malformed JSON is refused", "application/json", `{"a":`, domain.Message{}, domain.ErrInvalid},
		{"JSON with trailing garbage is refused", "application/json", `{} x`, domain.Message{}, domain.ErrInvalid},
		{"malformed form is refused", "application/x-www-form-urlencoded", "a=%zz", domain.Message{}, domain.ErrInvalid},
		{"empty body", "text/plain", "", domain.Message{}, domain.ErrInvalid},
		{"blank body", "text/plain", " \n", domain.Message{}, domain.ErrInvalid},
		{"not UTF-8", "application/octet-stream", "\xff\xfe\x00", domain.Message{}, webhook.ErrUnsupportedBody},
		{"empty JSON array", "application/json", " [ ] ", domain.Message{}, domain.ErrInvalid},
		{"empty JSON string", "application/json", `""`, domain.Message{}, domain.ErrInvalid},
		{"JSON over the extra limit", "application/json", `"` + strings.Repeat("x", domain.MaxExtra) + `"`, domain.Message{}, domain.ErrInvalid},
		{"form without fields", "application/x-www-form-urlencoded", "&", domain.Message{}, domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Parse(tt.contentType, []byte(tt.body))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
