package domain

import "fmt"

// Size limits on stored fields. Every field a caller or the outside world
// can fill is bounded, so one publish or one inbound request cannot bloat
// the log, every read of it and every prompt built from it. The body has
// its own, configurable limit (see Message.Validate); role content and
// identity theirs (MaxRoleContent, MaxIdentity).
const (
	// MaxName bounds worker names and role, position and stream titles/names.
	MaxName = 256
	// MaxDescription bounds a stream's description.
	MaxDescription = 4 << 10
	// MaxSubject bounds a message subject (an email subject, an issue title).
	MaxSubject = 2 << 10
	// MaxMessageRef bounds threadId, inReplyTo and messageId (email
	// Message-IDs, delivery ids).
	MaxMessageRef = 1 << 10
	// MaxAddress bounds from and each entry of to: a worker id or an email
	// address (64 + 1 + 255 octets at most).
	MaxAddress = 320
	// MaxRecipients bounds the number of entries in to.
	MaxRecipients = 1000
	// MaxContentType bounds bodyContentType and an attachment's contentType.
	MaxContentType = 255
	// MaxAttachments bounds the number of attachments on one message.
	MaxAttachments = 100
	// MaxAttachmentName bounds an attachment's file name.
	MaxAttachmentName = 255
	// MaxAttachmentRef bounds an attachment's ref.
	MaxAttachmentRef = 128
	// MaxExtra bounds a message's extra JSON, in bytes. Transports whose
	// payloads can be larger (a GitHub push) keep the whole payload as an
	// attachment instead.
	MaxExtra = 1 << 20
)

// checkLen reports a string field over its limit, in bytes.
func checkLen(field, v string, limit int) error {
	if len(v) > limit {
		return Invalid(field, "is %d bytes; the limit is %d", len(v), limit)
	}
	return nil
}

// checkCount reports a list field with more entries than its limit.
func checkCount(field string, n, limit int) error {
	if n > limit {
		return Invalid(field, "has %d entries; the limit is %d", n, limit)
	}
	return nil
}

// firstErr returns the first non-nil error, so a Validate can list its
// checks in one readable block.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func indexed(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }
