package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestGetAttachment(t *testing.T) {
	runTable(t, "get_attachment", []toolCase[getAttachmentOut]{
		{name: "missing ref", wantErr: []string{"ref: is required"}},
		{name: "not a ref", args: map[string]any{"ref": "e-123"}, wantErr: []string{`ref: "e-123" is not an attachment ref`}, wantIs: domain.ErrInvalid},
		{name: "unknown ref", args: map[string]any{"ref": "att-nope"}, wantErr: []string{`attachment "att-nope": not found`}, wantIs: domain.ErrNotFound},
	})
}

// TestGetAttachmentContent reads back files stored with an inbound
// message; refs are random, so the calls are made after the append.
func TestGetAttachmentContent(t *testing.T) {
	f := newFixture(t)
	must(t)(f.env.Store.CreateStream(t.Context(), "w-owner", domain.Stream{ID: "s-mail", Name: "mail",
		Transport: domain.Transport{Kind: domain.TransportKind("email"), Config: []byte(`{"alias":"sam"}`)}}))
	rs, err := f.env.Store.AppendInbound(t.Context(), []domain.Inbound{{StreamID: "s-mail", Message: domain.Message{Body: "see attached",
		Attachments: []domain.Attachment{{Name: "notes.txt", ContentType: "text/plain"}, {Name: "logo.png", ContentType: "image/png"}}},
		Key: "pm-1", Contents: [][]byte{[]byte("hello"), {0x89, 'P', 'N', 'G', 0xff}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := rs[0].Event
	atts := ev.Message.Attachments
	cases := []struct {
		name string
		ref  string
		want getAttachmentOut
	}{
		{"text file", atts[0].Ref, getAttachmentOut{Attachment: domain.Attachment{Name: "notes.txt", ContentType: "text/plain", Size: 5, Ref: atts[0].Ref},
			EventID: ev.ID, StreamID: "s-mail", Text: "hello", ContentBase64: "aGVsbG8="}},
		{"binary file: no text", atts[1].Ref, getAttachmentOut{Attachment: domain.Attachment{Name: "logo.png", ContentType: "image/png", Size: 5, Ref: atts[1].Ref},
			EventID: ev.ID, StreamID: "s-mail", ContentBase64: "iVBOR/8="}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustCall[getAttachmentOut](t, f.as("w-maya"), "get_attachment", map[string]any{"ref": tc.ref})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
