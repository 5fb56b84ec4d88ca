package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestAppendEnforcesLimits: every append path — a worker's, the system's,
// an inbound transport's — refuses a blank body, a body over the
// appender's limit and a message over a field limit, naming the field
// and the limit, and stores nothing.
func TestAppendEnforcesLimits(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	bigExtra := json.RawMessage(`"` + strings.Repeat("x", domain.MaxExtra) + `"`)
	tests := []struct {
		name   string
		append func(domain.Message) error
		msg    domain.Message
		want   string
	}{
		{"system append, blank body", appendVia(ctx, st, ""), domain.Message{Body: " \n"}, "body: is required"},
		{"worker append, blank body", appendVia(ctx, st, "w-owner"), domain.Message{Body: ""}, "body: is required"},
		{"worker append, body over the default", appendVia(ctx, st, "w-owner"), domain.Message{Body: strings.Repeat("b", domain.DefaultMaxBody+1)},
			fmt.Sprintf("body: is %d bytes; the limit is %d", domain.DefaultMaxBody+1, domain.DefaultMaxBody)},
		{"worker append, body over its limit", func(m domain.Message) error {
			_, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: "w-owner", Message: m}, store.AppendOptions{MaxBody: 10})
			return err
		}, domain.Message{Body: "eleven byte"}, "body: is 11 bytes; the limit is 10"},
		{"inbound append, blank body", func(m domain.Message) error {
			_, _, err := appendOne(ctx, st, domain.Inbound{StreamID: "s-a", Message: m, Key: "k-0"})
			return err
		}, domain.Message{Body: "\t"}, "body: is required"},
		{"inbound append, body over its limit", func(m domain.Message) error {
			_, err := st.AppendInbound(ctx, []domain.Inbound{{StreamID: "s-a", Message: m, Key: "k-00"}}, 3)
			return err
		}, domain.Message{Body: "four"}, "body: is 4 bytes; the limit is 3"},
		{"system append, extra", appendVia(ctx, st, ""), domain.Message{Body: "b", Extra: bigExtra},
			fmt.Sprintf("extra: is %d bytes; the limit is %d", domain.MaxExtra+2, domain.MaxExtra)},
		{"worker append, subject", appendVia(ctx, st, "w-owner"), domain.Message{Body: "b", Subject: strings.Repeat("s", domain.MaxSubject+1)},
			fmt.Sprintf("subject: is %d bytes; the limit is %d", domain.MaxSubject+1, domain.MaxSubject)},
		{"inbound append, to", func(m domain.Message) error {
			_, _, err := appendOne(ctx, st, domain.Inbound{StreamID: "s-a", Message: m, Key: "k-1"})
			return err
		}, domain.Message{Body: "b", To: make([]string, domain.MaxRecipients+1)},
			fmt.Sprintf("to: has %d entries; the limit is %d", domain.MaxRecipients+1, domain.MaxRecipients)},
		{"inbound append, attachment name", func(m domain.Message) error {
			_, _, err := appendOne(ctx, st, domain.Inbound{StreamID: "s-a", Message: m, Key: "k-2", Contents: [][]byte{[]byte("x")}})
			return err
		}, domain.Message{Body: "b", Attachments: []domain.Attachment{{Name: strings.Repeat("n", domain.MaxAttachmentName+1)}}},
			fmt.Sprintf("attachments[0].name: is %d bytes; the limit is %d", domain.MaxAttachmentName+1, domain.MaxAttachmentName)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := st.LastSeq(ctx)
			err := tt.append(tt.msg)
			if !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("append = %v, want an invalid-input error containing %q", err, tt.want)
			}
			if after, _ := st.LastSeq(ctx); after != before {
				t.Errorf("a refused append stored something: seq %d → %d", before, after)
			}
		})
	}
}

func appendVia(ctx context.Context, st *store.Store, source string) func(domain.Message) error {
	return func(m domain.Message) error {
		_, err := st.Append(ctx, domain.Event{StreamID: "s-a", Source: source, Message: m}, store.AppendOptions{})
		return err
	}
}

// TestAuditOfLargeRolesFits: the audit record of a valid change is never
// what makes the change fail. Markdown full of <, > and & is recorded
// unescaped; a pathological role whose record cannot fit is still
// changed, and its record says what was left out.
func TestAuditOfLargeRolesFits(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	for _, tt := range []struct {
		name, content string
		omitted       bool
	}{
		{"markdown full of angle brackets", strings.Repeat("<a&b>", domain.MaxRoleContent/5), false},
		{"quotes only, from markdown: the record still fits", strings.Repeat(`"`, domain.MaxRoleContent), false},
		{"backslashes only, from quotes: the record is too large", strings.Repeat(`\`, domain.MaxRoleContent), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := st.UpdateRole(ctx, "w-owner", "r-a", store.RoleUpdate{Content: &tt.content}); err != nil {
				t.Fatalf("update_role: %v", err)
			}
			r, err := st.GetRole(ctx, "r-a")
			if err != nil || r.Content != tt.content {
				t.Fatalf("the role was not changed: %v", err)
			}
			evs, _ := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
			var c store.Change
			if err := json.Unmarshal(evs[len(evs)-1].Message.Extra, &c); err != nil || c.Action != "update_role" {
				t.Fatalf("last audit = %+v, %v", c, err)
			}
			if got := c.Omitted != "" && c.After == nil; got != tt.omitted {
				t.Errorf("record omitted before/after = %v (%q), want %v", got, c.Omitted, tt.omitted)
			}
		})
	}
}
