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
	// Label is its event's, or for a file a skill answered with, the
	// label of the call that kept it.
	Label string `gorm:"not null;default:''"`
}

func (attachmentRow) TableName() string { return "attachments" }

// AttachmentFile is a stored attachment: its description, where it
// arrived and its content.
type AttachmentFile struct {
	domain.Attachment
	EventID  string
	StreamID string
	Content  []byte
	// Label is what reading it raises a run's label by: its event's, or
	// the keeping call's, narrowed by its stream's readers.
	Label domain.Label
}

// AppendInbound stores what an outside system sent, every message in one
// transaction, each with a body of at most maxBody bytes (the transport's
// limit). A message whose Key its stream already stored is not stored
// again: its receipt holds the stored event, marked Duplicate. Contents
// are stored in the same transaction and the attachments' Refs set, so an
// acknowledged message never points at a file that was not kept.
func (s *Store) AppendInbound(ctx context.Context, in []domain.Inbound, maxBody int) ([]domain.Receipt, error) {
	out := make([]domain.Receipt, len(in))
	err := s.write(ctx, func(tx *gorm.DB) error {
		for i, m := range in {
			r, err := s.appendInboundTx(tx, m, maxBody)
			if err != nil {
				return fmt.Errorf("append to %s: %w", m.StreamID, err)
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) appendInboundTx(tx *gorm.DB, m domain.Inbound, maxBody int) (domain.Receipt, error) {
	if len(m.Contents) > 0 && len(m.Contents) != len(m.Message.Attachments) {
		return domain.Receipt{}, fmt.Errorf("%d contents for %d attachments: %w", len(m.Contents), len(m.Message.Attachments), domain.ErrInvalid)
	}
	ev := domain.Event{ID: domain.NewEventID(), StreamID: m.StreamID, Message: m.Message}
	rows := make([]attachmentRow, len(m.Contents))
	ev.Message.Attachments = slices.Clone(ev.Message.Attachments)
	for i, c := range m.Contents {
		a := &ev.Message.Attachments[i]
		a.Ref, a.Size = AttachmentRefPrefix+domain.RandomSlug(16), int64(len(c))
		rows[i] = attachmentRow{ID: a.Ref, EventID: ev.ID, StreamID: ev.StreamID, Name: a.Name,
			ContentType: a.ContentType, Size: a.Size, Content: c, CreatedAt: s.Now()}
	}
	opts := AppendOptions{MaxBody: maxBody, dedupKey: m.Key, sender: m.Sender}
	if m.Via != "" {
		opts.label = s.arrivalLabel(ev, m.Via)
	}
	stored, dup, err := s.appendOnce(tx, ev, opts)
	if err == nil && !dup && m.Wake != nil && m.Wake.Worker != "" {
		err = s.wakeBuilderTx(tx, *m.Wake, stored)
	}
	if err != nil || dup || len(rows) == 0 {
		return domain.Receipt{Event: stored, Duplicate: dup}, err
	}
	for i := range rows {
		rows[i].Label = stored.Label.Encode()
	}
	return domain.Receipt{Event: stored}, tx.Create(&rows).Error
}

// Attachment returns a stored attachment by its Ref.
func (s *Store) Attachment(ctx context.Context, ref string) (AttachmentFile, error) {
	var r attachmentRow
	if err := s.read(ctx).Where("id = ?", ref).Take(&r).Error; err != nil {
		return AttachmentFile{}, notFoundOr(err, "attachment", ref)
	}
	label, err := domain.ParseLabel(r.Label)
	if err != nil {
		return AttachmentFile{}, fmt.Errorf("attachment %s: %w", ref, err)
	}
	if r.StreamID != "" {
		readers, err := streamReaders(s.read(ctx), r.StreamID)
		if err != nil {
			return AttachmentFile{}, fmt.Errorf("attachment %s: %w", ref, err)
		}
		if readers != nil {
			label = label.Join(domain.ReadBy(readers, "attachment "+ref+" on "+r.StreamID, domain.ByOutside))
		}
	}
	return AttachmentFile{Attachment: domain.Attachment{Name: r.Name, ContentType: r.ContentType, Size: r.Size, Ref: r.ID},
		EventID: r.EventID, StreamID: r.StreamID, Content: r.Content, Label: label}, nil
}

// LatestInbound returns the newest event the outside world put on a stream
// (one with no source worker) whose message has the given messageId and
// threadId; an empty one matches any. Transports use it to find the
// message a reply answers.
func (s *Store) LatestInbound(ctx context.Context, streamID, messageID, threadID string) (domain.Event, error) {
	q := s.read(ctx).Where("stream_id = ? AND source = ''", streamID)
	if messageID != "" {
		q = q.Where(s.dia.jsonText("body", "messageId")+" = ?", messageID)
	}
	if threadID != "" {
		q = q.Where(s.dia.jsonText("body", "threadId")+" = ?", threadID)
	}
	var r eventRow
	if err := q.Order("seq DESC").Take(&r).Error; err != nil {
		return domain.Event{}, notFoundOr(err, "inbound message on "+streamID, strings.TrimSpace(messageID+" "+threadID))
	}
	return r.toDomain()
}

// SaveFile keeps a file no inbound event brought — a skill's output — and
// returns its description with a new Ref, for get_attachment and for a
// message's attachments.
func (s *Store) SaveFile(ctx context.Context, a domain.Attachment, content []byte) (domain.Attachment, error) {
	a.Ref, a.Size = AttachmentRefPrefix+domain.RandomSlug(16), int64(len(content))
	row := attachmentRow{ID: a.Ref, Name: a.Name, ContentType: a.ContentType, Size: a.Size, Content: content, CreatedAt: s.Now(),
		Label: WritingLabel(ctx).Encode()}
	if err := s.write(ctx, func(tx *gorm.DB) error { return tx.Create(&row).Error }); err != nil {
		return domain.Attachment{}, fmt.Errorf("save file %s: %w", a.Name, err)
	}
	return a, nil
}
