package email_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/email"
)

// TestStreamConfig: what create_stream accepts for an email stream, with
// errors that name the field and the valid values.
func TestStreamConfig(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"valid", `{"alias":"sam_support-1"}`, ""},
		{"no alias", `{}`, "transport.config.alias: is required"},
		{"bad characters", `{"alias":"Sam!"}`, `transport.config.alias: "Sam!" may contain only lowercase letters, digits, '-' and '_'`},
		{"too long", `{"alias":"` + strings.Repeat("a", 65) + `"}`, "transport.config.alias: is longer than 64 characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := email.Transport.Check(json.RawMessage(tt.config))
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

// TestContact: the address set_contact takes for email and the contact
// stream it makes, which is a valid email stream.
func TestContact(t *testing.T) {
	for _, tt := range []struct{ name, address, want string }{
		{"an address: the worker's alias", "lee@example.com", `{"alias":"w-lee"}`},
		{"not an address", "lee at example", `address: "lee at example" is not an email address such as lee@example.com`},
		{"two addresses", "lee@example.com, ada@example.com", `address: "lee@example.com, ada@example.com" is not an email address`},
		{"too long", strings.Repeat("a", domain.MaxAddress) + "@example.com", "address: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := email.Transport.Contact.Stream("w-lee", tt.address)
			if err != nil {
				if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
				}
				return
			}
			if string(cfg) != tt.want || email.Transport.Check(cfg) != nil || !email.Transport.Contact.Mail {
				t.Errorf("contact stream %s (check: %v), want %s, shown as mail", cfg, email.Transport.Check(cfg), tt.want)
			}
		})
	}
}
