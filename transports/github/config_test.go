package github_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/github"
)

// TestStreamConfig: what create_stream accepts for a github stream, with
// errors that name the field and the valid values.
func TestStreamConfig(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"valid", `{"repo":"helixml/helix-org","events":["issues","pull_request"]}`, ""},
		{"repo without a slash", `{"repo":"helix","events":["issues"]}`, `transport.config.repo: "helix" must be "owner/name"`},
		{"no repo", `{"events":["issues"]}`, "transport.config.repo: is required"},
		{"unknown event lists the valid ones", `{"repo":"a/b","events":["star"]}`, `transport.config.events: unknown GitHub event "star" (valid: "issues", "issue_comment"`},
		{"no events", `{"repo":"a/b"}`, "transport.config.events: must list at least one event"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := github.Transport.Check(json.RawMessage(tt.config))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}
