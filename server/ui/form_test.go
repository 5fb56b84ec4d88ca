package ui

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestFormArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		form    url.Values
		want    string
		wantErr string
	}{
		{"strings, page fields dropped", url.Values{"title": {"Echo"}, "csrf": {"x"}, "next": {"/ui/"}}, `{"title":"Echo"}`, ""},
		{"blank fields left out", url.Values{"title": {"Echo"}, "id": {"  "}}, `{"title":"Echo"}`, ""},
		{"markdown keeps its whitespace", url.Values{"content": {"# A\n\n- b\n"}}, `{"content":"# A\n\n- b\n"}`, ""},
		{"a list from checkboxes", url.Values{"grants[]": {"publish", "read_events"}}, `{"grants":["publish","read_events"]}`, ""},
		{"a list typed with commas", url.Values{"to[]": {"w-maya, sam@example.com,"}}, `{"to":["w-maya","sam@example.com"]}`, ""},
		{"an empty list is left out", url.Values{"to[]": {" , "}}, `{}`, ""},
		{"nested objects and JSON", url.Values{"transport.kind": {"webhook"}, "transport.config:json": {`{"secret":"whsec_x"}`}}, `{"transport":{"config":{"secret":"whsec_x"},"kind":"webhook"}}`, ""},
		{"a string kept when empty, to clear it", url.Values{"description:str": {" "}, "name": {""}}, `{"description":""}`, ""},
		{"a string trimmed", url.Values{"description:str": {" Deploys. "}}, `{"description":"Deploys."}`, ""},
		{"a checkbox", url.Values{"includeDismissed:bool": {"on"}}, `{"includeDismissed":true}`, ""},
		{"bad JSON names the field", url.Values{"transport.config:json": {`{"secret":`}}, "", "transport.config: is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formArgs(tt.form)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, domain.ErrInvalid) || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(tt.want), &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/ui/workers/w-maya":       "/ui/workers/w-maya",
		"/ui/streams/s-a?before=9": "/ui/streams/s-a?before=9",
		"/ui/#p-eng":               "/ui/#p-eng",
		"//evil.example/ui/":       "/ui/",
		"https://evil.example/ui/": "/ui/",
		"/workers/w-owner/mcp":     "/ui/",
		"":                         "/ui/",
		"javascript:alert(1)":      "/ui/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdownIsSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want, never string }{
		{"raw HTML is dropped", "hi <script>alert(1)</script><b>x</b>", "hi", "<script"},
		{"javascript links lose their target", "[x](javascript:alert(1))", `<a href="">x</a>`, "javascript:"},
		{"an image becomes a link", "![logo](https://cdn.example/logo.png)", `<a class="image-link" href="https://cdn.example/logo.png">logo</a>`, "<img"},
		{"a data: image becomes an empty link", "![x](data:image/png;base64,AAAA)", `<a class="image-link" href="">x</a>`, "data:"},
		{"markdown renders", "**bold** and `code`", "<strong>bold</strong> and <code>code</code>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(markdown(tt.in))
			if !contains(got, tt.want) {
				t.Errorf("markdown(%q) = %q, want it to contain %q", tt.in, got, tt.want)
			}
			if tt.never != "" && contains(got, tt.never) {
				t.Errorf("markdown(%q) = %q, which contains %q", tt.in, got, tt.never)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
