package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// AttachmentRefPrefix starts every attachment reference.
const AttachmentRefPrefix = "att-"

// attachmentRow keeps the content of a file that arrived with an inbound
// message. The envelope carries only its name, type, size and Ref.
type attachmentRow struct {
	ID          string `gorm:"primaryKey"`
	EventID     string `gorm:"not null;index"`
	StreamID    string `gorm:"not null"`
	Name        string `gorm:"not null"`
	ContentType string
	Size        int64
	Content     []byte
	CreatedAt   time.Time
}

func (attachmentRow) TableName() string { return "attachments" }

// AttachmentFile is a stored attachment: its description, where it
// arrived and its content.
type AttachmentFile struct {
	domain.Attachment
	EventID  string
	StreamID string
	Content  []byte
}

// AppendInbound appends a message from an outside system. key (the
// provider's delivery or message id) makes a repeat return the stored event
// with dup = true. contents[i], when given, is the content of
// ev.Message.Attachments[i]: each is stored in the event's own transaction
// and the attachment's Ref set, so an acknowledged message never points at
// a file that was not kept.
func (s *Store) AppendInbound(ctx context.Context, ev domain.Event, key string, contents [][]byte) (stored domain.Event, dup bool, err error) {
	if len(contents) > 0 && len(contents) != len(ev.Message.Attachments) {
		return domain.Event{}, false, fmt.Errorf("append inbound: %d contents for %d attachments: %w", len(contents), len(ev.Message.Attachments), domain.ErrInvalid)
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		if stored, dup, err = deduped(tx, ev.StreamID, key); err != nil || dup {
			return err
		}
		if ev.ID == "" {
			ev.ID = domain.NewEventID()
		}
		rows := make([]attachmentRow, len(contents))
		ev.Message.Attachments = slices.Clone(ev.Message.Attachments)
		for i, c := range contents {
			a := &ev.Message.Attachments[i]
			a.Ref, a.Size = AttachmentRefPrefix+domain.RandomSlug(16), int64(len(c))
			rows[i] = attachmentRow{ID: a.Ref, EventID: ev.ID, StreamID: ev.StreamID, Name: a.Name,
				ContentType: a.ContentType, Size: a.Size, Content: c, CreatedAt: s.Now()}
		}
		var e error
		if stored, e = s.appendTx(tx, ev, AppendOptions{DedupKey: key}); e != nil {
			return e
		}
		if len(rows) == 0 {
			return nil
		}
		return tx.Create(&rows).Error
	})
	if err != nil {
		return domain.Event{}, false, fmt.Errorf("append to %s: %w", ev.StreamID, err)
	}
	return stored, dup, nil
}

// Attachment returns a stored attachment by its Ref.
func (s *Store) Attachment(ctx context.Context, ref string) (AttachmentFile, error) {
	var r attachmentRow
	if err := s.read(ctx).Where("id = ?", ref).Take(&r).Error; err != nil {
		return AttachmentFile{}, notFoundOr(err, "attachment", ref)
	}
	return AttachmentFile{Attachment: domain.Attachment{Name: r.Name, ContentType: r.ContentType, Size: r.Size, Ref: r.ID},
		EventID: r.EventID, StreamID: r.StreamID, Content: r.Content}, nil
}

// LatestInbound returns the newest event the outside world put on a stream
// (one with no source worker) whose message has the given messageId and
// threadId; an empty one matches any. Transports use it to find the
// message a reply answers.
func (s *Store) LatestInbound(ctx context.Context, streamID, messageID, threadID string) (domain.Event, error) {
	q := s.read(ctx).Where("stream_id = ? AND source = ''", streamID)
	if messageID != "" {
		q = q.Where("json_extract(body, '$.messageId') = ?", messageID)
	}
	if threadID != "" {
		q = q.Where("json_extract(body, '$.threadId') = ?", threadID)
	}
	var r eventRow
	if err := q.Order("seq DESC").Take(&r).Error; err != nil {
		return domain.Event{}, notFoundOr(err, "inbound message on "+streamID, strings.TrimSpace(messageID+" "+threadID))
	}
	return r.toDomain()
}
