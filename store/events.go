package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	// encoding/json's API and behaviour at a fraction of its decoding
	// cost, which a 500-event page spends most of its time in; the go-sdk
	// decodes every MCP message with it already.
	fastjson "github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

type eventRow struct {
	Seq        int64      `gorm:"primaryKey;autoIncrement"`
	ID         string     `gorm:"uniqueIndex;not null"`
	StreamID   string     `gorm:"not null"` // indexed by migrateStreamIndex
	Stream     *streamRow `gorm:"foreignKey:StreamID"`
	Source     string
	SourceKind string `gorm:"not null"`
	CausedBy   string `gorm:"index"`
	// DedupKey makes inbound deliveries idempotent: a provider's delivery id
	// (webhook-id, MessageID, X-GitHub-Delivery) is stored at most once per stream.
	DedupKey  *string `gorm:"uniqueIndex:idx_events_dedup"`
	Depth     int     `gorm:"not null;default:0"`
	CreatedAt time.Time
	Body      string `gorm:"not null"`
	// Label is the event's domain.Label, encoded ("" is trusted and
	// readable by the org); appendOnce sets it.
	Label string `gorm:"not null;default:''"`
}

func (eventRow) TableName() string { return "events" }

// decodeLabel reads an event's stored label. One the server wrote and
// cannot read fails safe, as untrusted, rather than breaking the read.
func decodeLabel(ev *domain.Event, raw string) {
	lab, err := domain.ParseLabel(raw)
	if err != nil {
		lab = domain.Label{Untrusted: true, Origin: "event " + ev.ID + ": its stored label cannot be read"}
	}
	ev.Label = lab
}

func (r eventRow) toDomain() (domain.Event, error) {
	ev := domain.Event{ID: r.ID, Seq: r.Seq, StreamID: r.StreamID, Source: r.Source,
		SourceKind: domain.SourceKind(r.SourceKind), CausedBy: r.CausedBy, Depth: r.Depth, CreatedAt: r.CreatedAt.UTC()}
	decodeMessage(&ev, []byte(r.Body))
	decodeLabel(&ev, r.Label)
	return ev, nil
}

// decodeMessage reads an event's stored message. One it cannot read is
// not an error: the event carries its stored text and the reason
// (domain.Event.Undecodable), so a page or a read that holds it still
// works.
func decodeMessage(ev *domain.Event, body []byte) {
	if err := fastjson.Unmarshal(body, &ev.Message); err != nil {
		ev.Message, ev.Undecodable = domain.UndecodableMessage(body, err)
		return
	}
	ev.DropDeepExtra()
}

// AppendOptions carry what an append needs beyond the event itself.
type AppendOptions struct {
	// MaxBody is the body's limit in bytes, the appender's setting
	// (events.max_body_bytes, a transport's max_body_bytes); <= 0 means
	// domain.DefaultMaxBody.
	MaxBody int
	// dedupKey, set only by AppendInbound, stores a provider's key once
	// per stream.
	dedupKey string
	// sender, set only by AppendInbound, is who the transport vouches
	// sent the message (relayAnswer).
	sender domain.Sender
	// answerOf is the contact stream the event relays an answer from:
	// it is not relayed back there.
	answerOf string
	// label is joined into the event's own: what the store appends as a
	// consequence of something labelled (a relayed copy, a notice about
	// an approval) carries that label on.
	label domain.Label
	// depth, set only for a processor's output, is the input's: a
	// processor is no AI run, so it adds no step to a chain.
	depth int
}

// Append stores an event on its stream. The stream must exist.
func (s *Store) Append(ctx context.Context, ev domain.Event, opts AppendOptions) (domain.Event, error) {
	var stored domain.Event
	err := s.write(ctx, func(tx *gorm.DB) error {
		var err error
		stored, err = s.appendTx(tx, ev, opts)
		return err
	})
	if err != nil {
		return domain.Event{}, fmt.Errorf("append to %s: %w", ev.StreamID, err)
	}
	return stored, nil
}

// dedupKey is the stored key of an inbound message: its stream and its
// provider key, joined by the dialect's separator.
func dedupKey(tx *gorm.DB, stream, key string) *string {
	k := stream + dialectOf(tx).keySep() + key
	return &k
}

// deduped returns the event already stored on stream under key, if any.
func deduped(tx *gorm.DB, stream, key string) (domain.Event, bool, error) {
	if key == "" {
		return domain.Event{}, false, nil
	}
	var prev eventRow
	err := tx.Where("dedup_key = ?", dedupKey(tx, stream, key)).Take(&prev).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.Event{}, false, nil
	}
	if err != nil {
		return domain.Event{}, false, err
	}
	ev, err := prev.toDomain()
	return ev, err == nil, err
}

// appendTx is the single place events enter the log, so every append —
// publish, DM, audit, inbox, activation log, inbound transport — follows
// the same message rules: a body that is not blank and within the
// appender's limit, every other field within its fixed limit — and none
// on an archived stream, so nothing on it wakes its members again.
func (s *Store) appendTx(tx *gorm.DB, ev domain.Event, opts AppendOptions) (domain.Event, error) {
	stored, _, err := s.appendOnce(tx, ev, opts)
	return stored, err
}

// Statements of every append, run without GORM (queryFixed). An event
// whose dedup key its stream already stored inserts nothing and returns
// no row.
const (
	streamKindSQL  = "SELECT transport_kind, archived_at IS NOT NULL FROM streams WHERE id = ?"
	sourceKindSQL  = "SELECT kind FROM workers WHERE id = ?"
	insertEventSQL = `INSERT INTO events (id, stream_id, source, source_kind, caused_by, dedup_key, depth, created_at, body, label)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING RETURNING seq`
)

// appendOnce is appendTx, with opts.dedupKey: when the stream already
// stored an event under that key, it returns that event and dup, and
// stores nothing.
func (s *Store) appendOnce(tx *gorm.DB, ev domain.Event, opts AppendOptions) (stored domain.Event, dup bool, err error) {
	if err := ev.Message.Validate(opts.MaxBody); err != nil {
		// A retry of what was stored is a duplicate, even if the limits
		// have changed since.
		if prev, dup, derr := deduped(tx, ev.StreamID, opts.dedupKey); derr != nil || dup {
			return prev, dup, derr
		}
		return ev, false, err
	}
	var kind string
	var archived bool
	ok, err := s.scanFixed(tx, streamKindSQL, []any{ev.StreamID}, &kind, &archived)
	if err != nil {
		return ev, false, err
	}
	if !ok {
		return ev, false, domain.NotFound("stream", ev.StreamID)
	}
	if archived {
		return ev, false, domain.StreamArchived("stream", ev.StreamID)
	}
	if ev.ID == "" {
		ev.ID = domain.NewEventID()
	}
	ev.CreatedAt = s.Now()
	ev.SourceKind = domain.SourceSystem
	if ev.Source != "" {
		var kind string
		ok, err := s.scanFixed(tx, sourceKindSQL, []any{ev.Source}, &kind)
		if err == nil && !ok {
			err = fmt.Errorf("%w: %w", domain.ErrNotFound, gorm.ErrRecordNotFound)
		}
		if err != nil {
			return ev, false, fmt.Errorf("source worker %q: %w", ev.Source, err)
		}
		ev.SourceKind = domain.SourceKind(kind)
	}
	if ev.Depth, ev.Label, err = s.depthAndLabel(tx, ev, domain.TransportKind(kind), opts); err != nil {
		return ev, false, err
	}
	ev.Depth = max(ev.Depth, opts.depth)
	q, err := quoteQuestion(tx, &ev)
	if err != nil {
		return ev, false, fmt.Errorf("question answered: %w", err)
	}
	body, err := json.Marshal(ev.Message)
	if err != nil {
		return ev, false, fmt.Errorf("encode message: %w", err)
	}
	var key *string
	if opts.dedupKey != "" {
		key = dedupKey(tx, ev.StreamID, opts.dedupKey)
	}
	ok, err = s.scanFixed(tx, insertEventSQL, []any{ev.ID, ev.StreamID, ev.Source, string(ev.SourceKind),
		ev.CausedBy, key, ev.Depth, ev.CreatedAt, string(body), ev.Label.Encode()}, &ev.Seq)
	if err != nil {
		return ev, false, err
	}
	if !ok {
		prev, dup, err := deduped(tx, ev.StreamID, opts.dedupKey)
		if err == nil && !dup {
			err = fmt.Errorf("insert event %s: no row and no duplicate", ev.ID)
		}
		return prev, dup, err
	}
	if err := closeQuestion(tx, q, ev); err != nil {
		return ev, false, err
	}
	if err := s.answeredTx(tx, q, ev); err != nil {
		return ev, false, err
	}
	if err := s.enqueueTriggers(tx, ev); err != nil {
		return ev, false, err
	}
	if err := s.enqueueWork(tx, ev); err != nil {
		return ev, false, err
	}
	if domain.TransportKind(kind) == domain.TransportSchedule && ev.Source == "" {
		if err := s.recurTx(tx, ev); err != nil {
			return ev, false, err
		}
	}
	return ev, false, s.relayContacts(tx, ev, opts)
}

// depthAndLabel are what the store decides of a new event (labels.go
// says how its label is decided). Depth is 0 for what humans, the outside
// world and the system say, and one more than the deepest trigger of the
// run for what an AI worker publishes during one (CausedBy names the
// activation): a chain of AI runs waking each other grows deeper with each
// step, whatever streams it crosses, and the dispatcher stops it at
// dispatch.max_depth. Only an event a run caused costs a query: its depth
// and the run's label come in one.
func (s *Store) depthAndLabel(tx *gorm.DB, ev domain.Event, kind domain.TransportKind, opts AppendOptions) (int, domain.Label, error) {
	label := s.arrivalLabel(ev, kind).Join(opts.label)
	depth := 0
	if ev.CausedBy != "" && (ev.SourceKind == domain.SourceAI || strings.HasPrefix(ev.CausedBy, domain.PrefixActivation)) {
		var (
			deepest sql.NullInt64
			run     sql.NullString
		)
		if _, err := s.scanFixed(tx, runOfEventSQL, []any{ev.CausedBy, ev.Source, ev.CausedBy}, &deepest, &run); err != nil {
			return 0, label, err
		}
		if deepest.Valid && ev.SourceKind == domain.SourceAI {
			depth = int(deepest.Int64) + 1
		}
		l, err := domain.ParseLabel(run.String)
		if err != nil {
			return 0, label, fmt.Errorf("label of %s: %w", ev.CausedBy, err)
		}
		label = label.Join(l)
	}
	return depth, writtenUnder(tx.Statement.Context, label), nil
}

// runOfEventSQL reads, for an event a run caused, the deepest trigger of
// the run (its worker's) and the run's label.
const runOfEventSQL = "SELECT (SELECT MAX(depth) FROM triggers WHERE activation_id = ? AND worker_id = ?), (SELECT label FROM activations WHERE id = ?)"

// EventQuery selects events oldest first.
type EventQuery struct {
	StreamIDs []string
	// Since is an exclusive cursor: only events with Seq > Since.
	Since int64
	Limit int
}

// MaxReadLimit caps one read.
const MaxReadLimit = 500

// readEventsSQL selects ReadEvents' page: on (stream_id, seq) through the
// stream_id index, whose entries end with the rowid (SQLite) or which the
// planner pairs with the primary key (PostgreSQL), so a page costs the
// same at any depth of history (BenchmarkReadEvents).
const readEventsSQL = `SELECT seq, id, stream_id, COALESCE(source, '') AS source, source_kind, COALESCE(caused_by, '') AS caused_by, depth, created_at, body, label
	FROM events WHERE stream_id IN ? AND seq > ? ORDER BY seq LIMIT ?`

// ReadEvents returns events on the given streams after the cursor.
func (s *Store) ReadEvents(ctx context.Context, q EventQuery) ([]domain.Event, error) {
	if len(q.StreamIDs) == 0 {
		return nil, nil
	}
	if q.Limit <= 0 || q.Limit > MaxReadLimit {
		q.Limit = MaxReadLimit
	}
	// On SQLite the database hands the page over as one JSON array
	// (eventPageSQL): one value to fetch rather than nine columns a row,
	// each a cgo call or more, which cost more than the query itself.
	// PostgreSQL's driver reads rows cheaply, and building the JSON costs
	// its server more than that saves, so it reads rows. A page is
	// bounded, so it runs on a context SQLite's driver cannot cancel,
	// which would step it on a goroutine of its own (prepared.go).
	db := s.read(context.WithoutCancel(ctx))
	if pageSQL := s.dia.eventPageSQL(readEventsSQL); pageSQL != "" {
		key := pageKey(q)
		if out, ok, err := s.cachedPage(ctx, key); ok || err != nil {
			return out, err
		}
		var page []byte
		var last int64
		err := db.Raw(pageSQL, q.StreamIDs, q.Since, q.Limit).Row().Scan(&last, &page)
		if err == nil {
			var out []domain.Event
			if out, err = decodeEventPage(page, q.Limit); err == nil {
				s.keepPage(key, eventPage{events: slices.Clone(out), last: last, full: len(out) == q.Limit}, len(page))
				return out, nil
			}
		}
		// A body SQLite cannot read as JSON (damaged, or nested past its
		// limit of 1,000) fails the whole page: read it row by row, where
		// such a body is shown as it is stored. Any other failure fails
		// there too.
		s.log.Warn("read events: the page failed; reading it row by row", "streams", q.StreamIDs, "since", q.Since, "err", err)
	}
	rows, err := db.Raw(readEventsSQL, q.StreamIDs, q.Since, q.Limit).Rows()
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	out := make([]domain.Event, 0, min(q.Limit, 64))
	for n := 0; rows.Next(); n++ {
		if err := watchRows(ctx, n); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// scanEvent reads one row of readEventsSQL's columns.
func scanEvent(rows *sql.Rows) (domain.Event, error) {
	var (
		ev         domain.Event
		sourceKind string
		body       sql.RawBytes
		label      string
	)
	if err := rows.Scan(&ev.Seq, &ev.ID, &ev.StreamID, &ev.Source, &sourceKind, &ev.CausedBy, &ev.Depth, &ev.CreatedAt, &body, &label); err != nil {
		return ev, err
	}
	ev.SourceKind, ev.CreatedAt = domain.SourceKind(sourceKind), ev.CreatedAt.UTC()
	decodeMessage(&ev, body)
	decodeLabel(&ev, label)
	return ev, nil
}

// pageEvent is an event as eventPageSQL writes it: its time as the
// database keeps it, which is not always RFC 3339.
type pageEvent struct {
	domain.Event
	CreatedAt string `json:"createdAt"`
}

// decodeEventPage reads eventPageSQL's array, oldest first.
func decodeEventPage(page []byte, limit int) ([]domain.Event, error) {
	rows := make([]pageEvent, 0, limit)
	if err := fastjson.Unmarshal(page, &rows); err != nil {
		return nil, fmt.Errorf("decode events: %w", err)
	}
	out := make([]domain.Event, len(rows))
	for i, r := range rows {
		t, err := parseStoredTime(r.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("decode event %s: %w", r.ID, err)
		}
		out[i] = r.Event
		out[i].CreatedAt = t
		out[i].DropDeepExtra()
	}
	// An aggregate's order is the database's choice; the page's is seq.
	slices.SortFunc(out, func(a, b domain.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// storedTimeLayouts are the forms a time takes in an event page: SQLite
// keeps what its driver wrote (the first), PostgreSQL writes RFC 3339.
var storedTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05"}

func parseStoredTime(v string) (time.Time, error) {
	for _, layout := range storedTimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is in none of the stored forms", v)
}

// GetEvent returns one event by id.
func (s *Store) GetEvent(ctx context.Context, id string) (domain.Event, error) {
	var r eventRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Event{}, fmt.Errorf("event %q: %w", id, mapErr(err))
	}
	return r.toDomain()
}

// LastSeq returns the highest sequence number stored, 0 when empty.
func (s *Store) LastSeq(ctx context.Context) (int64, error) {
	var seq *int64
	if err := s.read(ctx).Model(&eventRow{}).Select("MAX(seq)").Scan(&seq).Error; err != nil {
		return 0, err
	}
	if seq == nil {
		return 0, nil
	}
	return *seq, nil
}

// EventsByKind counts the events after seq by their stream's transport
// kind and returns the last seq counted. The server's metrics read the
// log this way, a little at each scrape, so appending pays nothing for
// being counted. Commits are serialised, so seqs commit in order.
func (s *Store) EventsByKind(ctx context.Context, after int64) (map[domain.TransportKind]int64, int64, error) {
	var rows []struct {
		Kind string
		N    int64
		Last int64
	}
	err := s.read(ctx).Table("events").Select("streams.transport_kind AS kind, COUNT(*) AS n, MAX(events.seq) AS last").
		Joins("JOIN streams ON streams.id = events.stream_id").Where("events.seq > ?", after).
		Group("streams.transport_kind").Scan(&rows).Error
	if err != nil {
		return nil, after, fmt.Errorf("count events by kind: %w", err)
	}
	counts := make(map[domain.TransportKind]int64, len(rows))
	for _, r := range rows {
		counts[domain.TransportKind(r.Kind)] += r.N
		after = max(after, r.Last)
	}
	return counts, after, nil
}
