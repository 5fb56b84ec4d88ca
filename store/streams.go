package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type streamRow struct {
	ID              string `gorm:"primaryKey"`
	Name            string `gorm:"not null"`
	Description     string
	TransportKind   string `gorm:"not null;index"`
	TransportConfig string `gorm:"not null"`
	CreatedBy       string
	CreatedAt       time.Time
	// Private streams are read only by their members: what is on them
	// carries those readers (labels.go).
	Private bool `gorm:"not null;default:false"`
	// ArchivedAt is when the stream was archived (stream_archive.go).
	ArchivedAt *time.Time
}

func (streamRow) TableName() string { return "streams" }

// toDomain returns the stream as stored: its secrets encrypted.
func (r streamRow) toDomain() domain.Stream {
	st := domain.Stream{ID: r.ID, Name: r.Name, Description: r.Description, CreatedBy: r.CreatedBy, Private: r.Private,
		CreatedAt: r.CreatedAt.UTC(), Transport: domain.Transport{Kind: domain.TransportKind(r.TransportKind), Config: json.RawMessage(r.TransportConfig)}}
	if r.ArchivedAt != nil {
		t := r.ArchivedAt.UTC()
		st.ArchivedAt = &t
	}
	return st
}

// stream returns the row with its transport secrets redacted: the stored
// config holds them encrypted, and only StreamWithSecrets opens them.
func (s *Store) stream(r streamRow) domain.Stream {
	st := r.toDomain()
	st.Transport = s.transports.Redact(st.Transport)
	return st
}

// CreateStream stores a stream after validating its transport config
// with its kind's own check.
func (s *Store) CreateStream(ctx context.Context, actor string, st domain.Stream) (domain.Stream, error) {
	if err := st.Validate(); err != nil {
		return domain.Stream{}, err
	}
	if err := s.transports.Validate(st.Transport); err != nil {
		return domain.Stream{}, err
	}
	cfg := "{}"
	if len(st.Transport.Config) > 0 && string(st.Transport.Config) != "null" {
		cfg = string(st.Transport.Config)
	}
	cfg, _, err := s.sealConfig(st.Transport.Kind, cfg)
	if err != nil {
		return domain.Stream{}, fmt.Errorf("create stream: encrypt transport secrets: %w", err)
	}
	var row streamRow
	err = s.write(ctx, func(tx *gorm.DB) error {
		id, err := pickID(tx, &streamRow{}, "stream", domain.PrefixStream, st.ID, st.Name)
		if err != nil {
			return err
		}
		if err := s.admitStream(ctx, tx, actor, st.Transport); err != nil {
			return err
		}
		row = streamRow{ID: id, Name: st.Name, Description: st.Description, TransportKind: string(st.Transport.Kind),
			TransportConfig: cfg, CreatedBy: actor, CreatedAt: s.Now(), Private: st.Private}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_stream", Actor: actor, Target: id, After: s.stream(row)})
	})
	if err != nil {
		return domain.Stream{}, fmt.Errorf("create stream: %w", err)
	}
	return s.stream(row), nil
}

// admitStream asks the kind's Admit, if it has one, whether actor may
// make one more stream of it; the operator is not bound.
func (s *Store) admitStream(ctx context.Context, tx *gorm.DB, actor string, t domain.Transport) error {
	return s.admit(ctx, actor, t, func() (made int64, err error) {
		err = tx.Model(&streamRow{}).Where("transport_kind = ? AND created_by = ?", string(t.Kind), actor).Count(&made).Error
		return made, err
	})
}

// admit asks the kind's Admit, if it has one, whether t may be stored
// for actor, who has made made() streams of the kind (nil: a change makes
// none, so the count Admit bounds is not its to refuse); the operator is
// not bound.
func (s *Store) admit(ctx context.Context, actor string, t domain.Transport, made func() (int64, error)) error {
	spec, err := s.transports.Spec("transport.kind", t.Kind)
	if err != nil || spec.Admit == nil || actor == "" {
		return err
	}
	var n int64
	if made != nil {
		if n, err = made(); err != nil {
			return err
		}
	}
	return spec.Admit(t.Config, int(n), func(set domain.SettingSpec) string {
		v, _ := s.SettingOr(ctx, set)
		return v
	})
}

// GetStream returns one stream, its transport secrets redacted.
func (s *Store) GetStream(ctx context.Context, id string) (domain.Stream, error) {
	c, err := s.cachedStream(ctx, id)
	return c.shown, err
}

// StreamWithSecrets returns one stream with its transport secrets
// decrypted, for the transport code that verifies or signs with them and
// for nothing else: never show what it returns.
func (s *Store) StreamWithSecrets(ctx context.Context, id string) (domain.Stream, error) {
	c, err := s.cachedStream(ctx, id)
	return c.opened, err
}

// ListStreams returns the streams in use by id, optionally of one
// transport kind: an archived stream is left out, so no transport routes
// to it and no schedule ticks on it.
func (s *Store) ListStreams(ctx context.Context, kind domain.TransportKind) ([]domain.Stream, error) {
	return s.listStreams(ctx, kind, false)
}

// ListAllStreams is ListStreams with the archived streams too, for those
// who read history: list_streams asked for them, an export of the org.
func (s *Store) ListAllStreams(ctx context.Context, kind domain.TransportKind) ([]domain.Stream, error) {
	return s.listStreams(ctx, kind, true)
}

func (s *Store) listStreams(ctx context.Context, kind domain.TransportKind, archived bool) ([]domain.Stream, error) {
	q := s.read(ctx).Order("id")
	if kind != "" {
		q = q.Where("transport_kind = ?", string(kind))
	}
	if !archived {
		q = q.Where("archived_at IS NULL")
	}
	var rows []streamRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	return mapRows(rows, s.stream), nil
}

// DMStreamID is the one stream two workers share for direct messages,
// the same whichever of them asks.
func DMStreamID(a, b string) string { return domain.DMStreamID(a, b) }

// EnsureDM returns the DM stream of two workers, creating it and
// subscribing both on first use.
func (s *Store) EnsureDM(ctx context.Context, from, to string) (domain.Stream, error) {
	if from == to {
		return domain.Stream{}, domain.Invalid("to", "cannot send a direct message to yourself (%s)", from)
	}
	id := DMStreamID(from, to)
	desc := "Direct messages between " + strings.Join(sortedPair(from, to), " and ")
	var row streamRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		for _, w := range []string{from, to} {
			var wr workerRow
			if err := tx.Where("id = ?", w).Take(&wr).Error; err != nil {
				return notFoundOr(err, "worker", w)
			}
			if wr.DismissedAt != nil {
				return fmt.Errorf("worker %q is dismissed: %w", w, domain.ErrConflict)
			}
		}
		err := tx.Where("id = ?", id).Take(&row).Error
		switch {
		case err == nil && row.Description != desc:
			return fmt.Errorf("stream %q exists but is not the DM stream of %s and %s: %w", id, from, to, domain.ErrConflict)
		case err == nil:
			return nil
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		row = streamRow{ID: id, Name: "dm " + strings.Join(sortedPair(from, to), " "), Description: desc,
			TransportKind: string(domain.TransportLocal), TransportConfig: "{}", CreatedBy: from, CreatedAt: s.Now()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		for _, w := range []string{from, to} {
			if err := tx.Create(&subscriptionRow{WorkerID: w, StreamID: id, CreatedAt: s.Now()}).Error; err != nil {
				return err
			}
		}
		return s.audit(tx, Change{Action: "create_stream", Actor: from, Target: id, After: s.stream(row)})
	})
	if err != nil {
		return domain.Stream{}, fmt.Errorf("dm stream: %w", err)
	}
	return s.stream(row), nil
}

func sortedPair(a, b string) []string {
	p := []string{a, b}
	slices.Sort(p)
	return p
}
