package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Labels (domain.Label) are decided here, in the store, never by a model:
//
//   - an event the outside world put on a stream of an untrusted transport
//     kind (Source "", domain.Transports.Untrusted) is untrusted, its
//     origin naming the kind, stream, event and sender;
//   - an event a run caused (CausedBy its activation: what an AI worker
//     publishes, its activation log) carries the run's label;
//   - what is appended as a consequence of a labelled event (a relayed
//     copy, a notice about an approval) carries that label on;
//   - whatever is written under a context a run's tool call set up
//     (Writing) carries the run's label: notices, insights, skills, spec
//     documents as well as events;
//   - the rest — what people and the system say — is trusted.
//
// Readers come from a stored label (what the writer had read) and from the
// stream an event is on, decided when it is read (streamLabel).

// writing is what a context says about what is written under it.
type writing struct {
	label        domain.Label
	declassified bool
}

type writingKey struct{}

// Writing returns ctx under which whatever the store writes carries at
// least l: the label of the run whose tool call writes.
func Writing(ctx context.Context, l domain.Label) context.Context {
	if l.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, writingKey{}, writing{label: l})
}

// WritingDeclassified is Writing for a call a person approved to
// declassify: what it writes keeps l's integrity, and the org may read it.
func WritingDeclassified(ctx context.Context, l domain.Label) context.Context {
	return context.WithValue(ctx, writingKey{}, writing{label: l, declassified: true})
}

// writtenUnder is l as written under ctx: joined with its Writing label,
// or readable by the org when a person declassified the call.
func writtenUnder(ctx context.Context, l domain.Label) domain.Label {
	w, ok := ctx.Value(writingKey{}).(writing)
	if !ok {
		return l
	}
	l = l.Join(w.label)
	if w.declassified {
		l = l.Declassified()
	}
	return l
}

// WritingLabel is the label what is written under ctx carries at least.
func WritingLabel(ctx context.Context) domain.Label {
	return writtenUnder(ctx, domain.Label{})
}

// arrivalLabel is an event's label by how it arrived: untrusted when the
// outside world put it on a stream of an untrusted kind.
func (s *Store) arrivalLabel(ev domain.Event, kind domain.TransportKind) domain.Label {
	if ev.Source != "" || kind == domain.TransportLocal || !s.transports.Untrusted(kind) {
		return domain.Label{}
	}
	origin := fmt.Sprintf("%s event %s on %s", kind, ev.ID, ev.StreamID)
	if ev.Message.From != "" {
		origin += fmt.Sprintf(" from %q", ev.Message.From)
	}
	return domain.Untrusted(origin)
}

// streamReaders says who may read a stream's events: a DM's two members
// (for what a person or the outside wrote there: see eventLabels.of),
// a contact stream's person, a private stream's members; nil — the org —
// for the rest. An inbox is read by its worker and those above it, but
// what it holds is the system's word about things labelled on their own
// (a notice about an approval carries the approval's label), so it does
// not narrow.
func streamReaders(tx *gorm.DB, id string) ([]string, error) {
	kind, worker := domain.StreamKindOf(id)
	if kind == domain.StreamContact {
		return []string{worker}, nil
	}
	var row streamRow
	if err := tx.Select("id", "created_by", "private").Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, notFoundOr(err, "stream", id)
	}
	switch {
	case kind == domain.StreamDM:
		a, b, ok := domain.DMPair(id, row.CreatedBy)
		if !ok {
			return []string{}, nil
		}
		return []string{a, b}, nil
	case row.Private:
		var members []string
		if err := tx.Model(&subscriptionRow{}).Where("stream_id = ?", id).Order("worker_id").Pluck("worker_id", &members).Error; err != nil {
			return nil, fmt.Errorf("members of %s: %w", id, err)
		}
		if members == nil {
			members = []string{}
		}
		return members, nil
	}
	return nil, nil
}

// eventLabels joins what events say when read: each one's stored label,
// narrowed by the readers of its stream. It reads each stream once.
type eventLabels struct {
	tx      *gorm.DB
	readers map[string][]string
}

func newEventLabels(tx *gorm.DB) *eventLabels {
	return &eventLabels{tx: tx, readers: map[string][]string{}}
}

// of is one event's label as a reader receives it.
func (e *eventLabels) of(ev domain.Event) (domain.Label, error) {
	readers, ok := e.readers[ev.StreamID]
	if !ok {
		var err error
		if readers, err = streamReaders(e.tx, ev.StreamID); err != nil {
			return domain.Label{}, err
		}
		e.readers[ev.StreamID] = readers
	}
	// Privacy belongs to people and to the outside: what an AI wrote in a
	// DM carries the label of the run that wrote it, which already holds
	// whatever private thing that run read, so two AI workers passing org
	// work between them need no declassifying. A private stream narrows
	// whoever wrote on it: its members chose that.
	if readers == nil || (ev.SourceKind == domain.SourceAI && domain.IsDM(ev.StreamID)) {
		return ev.Label, nil
	}
	by := ev.Source
	switch {
	case by != "":
	case ev.Label.Untrusted:
		by = domain.ByOutside
	default:
		by = domain.BySystem
	}
	return ev.Label.Join(domain.ReadBy(readers, fmt.Sprintf("event %s on %s", ev.ID, ev.StreamID), by)), nil
}

// join is the join of every event's label.
func (e *eventLabels) join(evs []domain.Event) (domain.Label, error) {
	var l domain.Label
	for _, ev := range evs {
		el, err := e.of(ev)
		if err != nil {
			return l, err
		}
		l = l.Join(el)
	}
	return l, nil
}

// LabelOfEvents is the join of the labels of events as a reader receives
// them: what reading them raises a run's label by.
func (s *Store) LabelOfEvents(ctx context.Context, evs []domain.Event) (domain.Label, error) {
	if len(evs) == 0 {
		return domain.Label{}, nil
	}
	l, err := newEventLabels(s.read(ctx)).join(evs)
	if err != nil {
		return l, fmt.Errorf("label of events: %w", err)
	}
	return l, nil
}

// StreamReaders says who may read what is on a stream: nil for the org.
func (s *Store) StreamReaders(ctx context.Context, stream string) ([]string, error) {
	return streamReaders(s.read(ctx), stream)
}

// ActivationLabel is a run's label now.
func (s *Store) ActivationLabel(ctx context.Context, id string) (domain.Label, error) {
	var raw []string
	if err := s.read(ctx).Model(&activationRow{}).Where("id = ?", id).Pluck("label", &raw).Error; err != nil {
		return domain.Label{}, fmt.Errorf("label of %s: %w", id, err)
	}
	if len(raw) == 0 {
		return domain.Label{}, domain.NotFound("activation", id)
	}
	return domain.ParseLabel(raw[0])
}

// RaiseLabel joins l into a run's label: what the run just read. It
// writes only when the label rises, so reading what the run's label
// already covers (trusted org data, mostly) costs one read.
func (s *Store) RaiseLabel(ctx context.Context, activation string, l domain.Label) (domain.Label, error) {
	cur, err := s.ActivationLabel(ctx, activation)
	if err != nil || cur.Join(l).Equal(cur) {
		return cur, err
	}
	err = s.write(ctx, func(tx *gorm.DB) error {
		var raw []string
		if err := tx.Model(&activationRow{}).Where("id = ?", activation).Pluck("label", &raw).Error; err != nil || len(raw) == 0 {
			return orNotFound(err, "activation", activation)
		}
		if cur, err = domain.ParseLabel(raw[0]); err != nil {
			return err
		}
		next := cur.Join(l)
		if next.Equal(cur) {
			return nil
		}
		cur = next
		return tx.Model(&activationRow{}).Where("id = ?", activation).Update("label", next.Encode()).Error
	})
	if err != nil {
		return cur, fmt.Errorf("raise the label of %s: %w", activation, err)
	}
	return cur, nil
}

// triggersLabel is the label a run starts with: the join of its trigger
// events' labels, as it receives them.
func triggersLabel(tx *gorm.DB, trigs []domain.Trigger) (domain.Label, error) {
	evs := make([]domain.Event, 0, len(trigs))
	seen := make(map[string]bool, len(trigs))
	for _, t := range trigs {
		if t.Event.ID != "" && !seen[t.Event.ID] {
			seen[t.Event.ID] = true
			evs = append(evs, t.Event)
		}
	}
	return newEventLabels(tx).join(evs)
}

// TriggerStreams are the streams of the events that woke an activation.
func (s *Store) TriggerStreams(ctx context.Context, activation string) ([]string, error) {
	var act activationRow
	if err := s.read(ctx).Where("id = ?", activation).Take(&act).Error; err != nil {
		return nil, notFoundOr(err, "activation", activation)
	}
	return streamsOfActivation(s.read(ctx), act)
}

// storedLabel reads a label column for a record's view. A label that does
// not parse is taken for what it must be: untrusted.
func storedLabel(raw string) domain.Label {
	l, err := domain.ParseLabel(raw)
	if err != nil {
		return domain.Untrusted("an unreadable label: " + err.Error())
	}
	return l
}

// TriggerPeople are the people whose events woke an activation: whose own
// words, read back, the run may share where they may (domain.Label.OwnWords).
func (s *Store) TriggerPeople(ctx context.Context, activation string) ([]string, error) {
	var people []string
	err := s.read(ctx).Table("triggers").Joins("JOIN events ON events.seq = triggers.event_seq").
		Joins("JOIN workers ON workers.id = events.source").
		Where("triggers.activation_id = ? AND workers.kind = ?", activation, string(domain.WorkerHuman)).
		Distinct().Order("events.source").Pluck("events.source", &people).Error
	if err != nil {
		return nil, fmt.Errorf("people who woke %s: %w", activation, err)
	}
	return people, nil
}
