package tools

import (
	"context"
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type getAttachmentIn struct {
	Ref string `json:"ref" jsonschema:"the attachment's ref (att-…), from an event's attachments"`
}

type getAttachmentOut struct {
	Attachment domain.Attachment `json:"attachment"`
	EventID    string            `json:"eventId"`
	StreamID   string            `json:"streamId"`
	// Text is set when the content is UTF-8 text; ContentBase64 always.
	Text          string `json:"text,omitempty" jsonschema:"the content, when it is UTF-8 text"`
	ContentBase64 string `json:"contentBase64" jsonschema:"the content, base64-encoded"`
}

func getAttachment() Tool {
	return define("get_attachment", "Read the content of a file that arrived with a message (e.g. an email attachment), by its ref.",
		func(ctx context.Context, env *Env, in getAttachmentIn) (getAttachmentOut, error) {
			if in.Ref == "" {
				return getAttachmentOut{}, domain.Required("ref")
			}
			if !strings.HasPrefix(in.Ref, store.AttachmentRefPrefix) {
				return getAttachmentOut{}, domain.Invalid("ref", "%q is not an attachment ref (they start with %q)", in.Ref, store.AttachmentRefPrefix)
			}
			f, err := env.Store.Attachment(ctx, in.Ref)
			if err != nil {
				return getAttachmentOut{}, err
			}
			if err := checkDMAccess(ctx, env, f.StreamID); err != nil {
				return getAttachmentOut{}, err
			}
			out := getAttachmentOut{Attachment: f.Attachment, EventID: f.EventID, StreamID: f.StreamID,
				ContentBase64: base64.StdEncoding.EncodeToString(f.Content)}
			if utf8.Valid(f.Content) {
				out.Text = string(f.Content)
			}
			return out, nil
		}).annotated("Get attachment", readOnly|idempotent).inCore(6)
}
