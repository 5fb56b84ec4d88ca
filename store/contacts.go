package store

import (
	"cmp"
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

// ContactStreamPrefix + worker id is the stream a human worker's
// contact channel runs on (domain.ContactStreamPrefix).
const ContactStreamPrefix = domain.ContactStreamPrefix

// contactRow is a human worker's contact channel.
type contactRow struct {
	WorkerID  string `gorm:"primaryKey"`
	Kind      string `gorm:"not null"`
	Address   string `gorm:"not null"`
	StreamID  string `gorm:"not null;uniqueIndex"`
	UpdatedBy string
	UpdatedAt time.Time
}

func (contactRow) TableName() string { return "contacts" }

// Contact is where a human worker is reached: Kind a transport kind
// that has a domain.ContactSpec (email, a Slack or Telegram chat…),
// Address what that kind calls an address.
type Contact struct {
	Kind, Address string
}

// transport is the contact stream's transport, as the kind's ContactSpec
// builds it from the address.
func (s *Store) contactTransport(worker string, c Contact) (domain.Transport, error) {
	kind := domain.TransportKind(c.Kind)
	spec, err := s.transports.Contact("channel", kind)
	if err != nil {
		return domain.Transport{}, err
	}
	if c.Address == "" {
		return domain.Transport{}, domain.Invalid("address", "is required: %s takes %s", kind, spec.Address)
	}
	cfg, err := spec.Stream(worker, c.Address)
	if err != nil {
		return domain.Transport{}, err
	}
	tr := domain.Transport{Kind: kind, Config: cfg}
	if err := s.transports.Validate(tr); err != nil {
		return domain.Transport{}, fmt.Errorf("%s contact: %w", kind, err)
	}
	return tr, nil
}

// SetContact gives a human worker below actor (or actor itself) a contact
// channel, on a stream of its own (s-contact-<worker>); the zero Contact
// removes it. Its DMs, the messages naming it in `to` and its inbox
// notices are then sent there, and its answers come back as its own
// messages when shown to be its (relayContacts).
func (s *Store) SetContact(ctx context.Context, actor, worker string, c Contact) (domain.Stream, error) {
	var tr domain.Transport
	if c != (Contact{}) {
		var err error
		if tr, err = s.contactTransport(worker, c); err != nil {
			return domain.Stream{}, err
		}
	}
	stream := ContactStreamPrefix + worker
	var out streamRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		var w workerRow
		if err := tx.Where("id = ?", worker).Take(&w).Error; err != nil {
			return notFoundOr(err, "worker", worker)
		}
		if w.DismissedAt != nil {
			return fmt.Errorf("worker %q is dismissed: %w", worker, domain.ErrConflict)
		}
		if w.Kind != string(domain.WorkerHuman) {
			return domain.Invalid("worker", "%s is an AI worker; only a human worker has a contact channel", worker)
		}
		if actor != worker {
			if err := newAuthz(tx).manages(actor, worker); err != nil {
				return err
			}
		}
		if c == (Contact{}) {
			return tx.Where("worker_id = ?", worker).Delete(&contactRow{}).Error
		}
		if err := s.contactStream(tx, actor, stream, worker, tr, &out); err != nil {
			return err
		}
		row := contactRow{WorkerID: worker, Kind: c.Kind, Address: c.Address, StreamID: stream, UpdatedBy: actor, UpdatedAt: s.Now()}
		if err := tx.Save(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "set_contact", Actor: actor, Target: worker, After: map[string]string{c.Kind: c.Address, "stream": stream}})
	})
	if err != nil {
		return domain.Stream{}, fmt.Errorf("set contact: %w", err)
	}
	return s.stream(out), nil
}

// contactStream creates the worker's contact stream, the worker
// subscribed, or points the one it has at the new channel.
func (s *Store) contactStream(tx *gorm.DB, actor, id, worker string, tr domain.Transport, out *streamRow) error {
	err := tx.Where("id = ?", id).Take(out).Error
	switch {
	case err == nil:
		if err := ownContactStream(tx, *out, worker); err != nil {
			return err
		}
		out.TransportKind, out.TransportConfig = string(tr.Kind), string(tr.Config)
		return tx.Save(out).Error
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return err
	}
	*out = streamRow{ID: id, Name: "contact " + worker, Description: "messages to and from " + worker, TransportKind: string(tr.Kind),
		TransportConfig: string(tr.Config), CreatedBy: actor, CreatedAt: s.Now()}
	if err := tx.Create(out).Error; err != nil {
		return err
	}
	return tx.Create(&subscriptionRow{WorkerID: worker, StreamID: id, CreatedAt: s.Now()}).Error
}

// ownContactStream refuses an existing contact stream made by someone
// other than the person, the operator or a worker above the person: made
// before create_stream refused the prefix, by a peer who may have meant
// to read what would be copied there. It is left as it is (its events
// are someone's), and the person gets no contact until it is gone.
func ownContactStream(tx *gorm.DB, st streamRow, worker string) error {
	if st.CreatedBy == "" || st.CreatedBy == worker {
		return nil
	}
	err := newAuthz(tx).manages(st.CreatedBy, worker)
	if err == nil || !isForbidden(err) && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	return fmt.Errorf("stream %s exists but was made by %s, not by set_contact: it may have been made to read %s's messages, so it is not used; "+
		"it is left as it is, and an operator must delete or rename it (after helix-org backup) before %s can have a contact: %w",
		st.ID, st.CreatedBy, worker, worker, domain.ErrConflict)
}

// relayContacts runs in every append's transaction: an event for a hired
// human worker with a contact channel is copied onto its contact stream
// (the kind's sender sends it); a message that comes back there is
// appended on the stream and thread of the event it answers — as the
// worker's own answer only when it is shown to be theirs (relayAnswer).
func (s *Store) relayContacts(tx *gorm.DB, ev domain.Event, opts AppendOptions) error {
	contacts, err := s.concernedContacts(tx, ev)
	if err != nil || len(contacts) == 0 {
		return err
	}
	for _, c := range contacts {
		switch {
		case ev.StreamID == c.StreamID && ev.Source == "":
			if err := s.relayAnswer(tx, c, ev, opts.sender); err != nil {
				return err
			}
		case ev.StreamID == c.StreamID || ev.Source == c.WorkerID || opts.answerOf == c.StreamID:
		default:
			ok, err := s.relayedFor(tx, c, ev)
			if err == nil && ok {
				err = s.relayOut(tx, c, ev)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// heldContacts selects the contacts of workers still hired; concerned
// adds the condition.
const heldContacts = `SELECT contacts.worker_id, contacts.kind, contacts.address, contacts.stream_id, workers.position_id
	FROM contacts JOIN workers ON workers.id = contacts.worker_id AND workers.dismissed_at IS NULL WHERE `

// concerned is the query for the contacts ev can concern, one indexed
// lookup per way, so that an append costs the same with a thousand people
// on channels as with one (BenchmarkAppendWithContacts): the contact whose
// stream ev is on (an answer), and those relayedFor may take — the
// inbox's owner, whoever ev names in to (worker or position), a DM
// stream's members. relayContacts still decides; this leaves out the rest.
func concerned(ev domain.Event) (string, []any) {
	q, args := heldContacts+"contacts.stream_id = ?", []any{ev.StreamID}
	names := ev.Message.To
	if kind, owner := domain.StreamKindOf(ev.StreamID); kind == domain.StreamInbox {
		// InboxStream trims the worker prefix when there is one.
		names = append(slices.Clip(names), owner, strings.TrimPrefix(owner, domain.PrefixWorker))
	}
	if len(names) > 0 {
		in := inList(len(names))
		q += " UNION " + heldContacts + "contacts.worker_id IN " + in + " UNION " + heldContacts + "workers.position_id IN " + in
		for range 2 {
			for _, n := range names {
				args = append(args, n)
			}
		}
	}
	if domain.IsDM(ev.StreamID) {
		q += " UNION " + heldContacts + "contacts.worker_id IN (SELECT worker_id FROM subscriptions WHERE stream_id = ?)"
		args = append(args, ev.StreamID)
	}
	return q + " ORDER BY 1", args
}

// concernedContacts runs concerned's query.
func (s *Store) concernedContacts(tx *gorm.DB, ev domain.Event) ([]heldContact, error) {
	q, args := concerned(ev)
	rows, err := s.queryFixed(tx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("contacts of %s: %w", ev.ID, err)
	}
	defer rows.Close()
	var out []heldContact
	for rows.Next() {
		var c heldContact
		if err := rows.Scan(&c.WorkerID, &c.Kind, &c.Address, &c.StreamID, &c.PositionID); err != nil {
			return nil, fmt.Errorf("contacts of %s: %w", ev.ID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// heldContact is the contact of a worker still hired, with its position.
type heldContact struct {
	WorkerID, Kind, Address, StreamID, PositionID string
}

// relayedFor says whether ev is for the worker: on its inbox, on a DM it
// is a member of, or naming it or its position in `to` (so a colleague
// addresses whoever holds the position, AI or human, the same way).
func (s *Store) relayedFor(tx *gorm.DB, c heldContact, ev domain.Event) (bool, error) {
	worker := c.WorkerID
	switch {
	case ev.StreamID == domain.InboxStream(worker), slices.Contains(ev.Message.To, worker), slices.Contains(ev.Message.To, c.PositionID):
		return true, nil
	case !domain.IsDM(ev.StreamID):
		return false, nil
	}
	var n int64
	err := tx.Model(&subscriptionRow{}).Where("worker_id = ? AND stream_id = ?", worker, ev.StreamID).Count(&n).Error
	return n > 0, err
}

func (s *Store) relayOut(tx *gorm.DB, c heldContact, ev domain.Event) error {
	subject := ev.Message.Subject
	if subject == "" {
		from := ev.Source
		if from == "" {
			from = "helix-org"
		}
		subject = "Message from " + from + " on " + ev.StreamID
	}
	source := ev.Source
	if source == "" {
		source = c.WorkerID
	}
	extra, _ := json.Marshal(map[string]string{"relayOf": ev.ID, "stream": ev.StreamID})
	msg := domain.Message{From: ev.Message.From, Body: cut(ev.Message.Body, domain.DefaultMaxBody),
		BodyContentType: ev.Message.BodyContentType, Extra: extra}
	spec, _ := s.transports.Contact("", domain.TransportKind(c.Kind))
	tag := ev.ID
	if spec.Mail {
		// An email's answer counts as the person's without SPF and DKIM
		// only with the token; a chat's sender is the platform's word.
		token, err := s.replyToken(c.WorkerID, ev.ID)
		if err != nil {
			return fmt.Errorf("reply token: %w", err)
		}
		tag += " t-" + token
	}
	msg.Subject = cut(subject, domain.MaxSubject-64) + " [helix " + tag + "]"
	if spec.Mail {
		msg.To = []string{c.Address}
	} else {
		// A chat shows no subject: it heads the text.
		msg.Body = cut(msg.Subject+"\n\n"+ev.Message.Body, domain.DefaultMaxBody)
	}
	_, err := s.appendTx(tx, domain.Event{StreamID: c.StreamID, Source: source, CausedBy: ev.ID, Message: msg}, AppendOptions{label: ev.Label})
	return err
}

// relayAnswer appends what came in on the contact stream where the event
// it answers was (answered): as the worker's own answer when vouched
// shows it is theirs; otherwise as a message from outside (no source),
// from the address it claims, marked unverified, so no one mistakes it
// for the worker's word. What answers nothing stays on the contact
// stream.
func (s *Store) relayAnswer(tx *gorm.DB, c heldContact, ev domain.Event, sender domain.Sender) error {
	id, err := answered(tx, c.StreamID, ev.Message)
	if err != nil || id == "" {
		return err
	}
	var orig eventRow
	if err := tx.Where("id = ?", id).Take(&orig).Error; errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	o, err := orig.toDomain()
	if err != nil {
		return err
	}
	stream, thread := o.StreamID, o.Message.ThreadID
	if thread == "" {
		thread = o.ID
	}
	if stream == domain.InboxStream(c.WorkerID) {
		return nil // an inbox takes no messages; the answer stays on the contact stream
	}
	how, err := s.vouched(c, ev, sender, o)
	if err != nil {
		return err
	}
	msg := domain.Message{From: c.WorkerID, Body: cut(ev.Message.Body, domain.DefaultMaxBody), ThreadID: thread, InReplyTo: o.ID}
	opts := AppendOptions{answerOf: c.StreamID}
	out := domain.Event{StreamID: stream, Source: c.WorkerID, CausedBy: ev.ID, Message: msg}
	if how == "" {
		out.Source, out.Message.From = "", ev.Message.From
		out.Message.Body = cut(unverifiedHead(c.WorkerID, ev.Message.From)+ev.Message.Body, domain.DefaultMaxBody)
		out.Message.Extra, _ = json.Marshal(map[string]string{"unverifiedSender": ev.Message.From, "contactOf": c.WorkerID})
		// Nobody vouched for it: it is outside input, labelled as what came in.
		opts.label = ev.Label
	} else {
		out.Message.Extra, _ = json.Marshal(map[string]string{"verifiedBy": how})
	}
	_, err = s.appendTx(tx, out, opts)
	return err
}

// vouched says how ev, which came in on c's contact stream, is known to
// be c's worker's, "" when it is not: the transport vouches for the
// contact's address (sender: SPF and DKIM, the chat platform), or ev
// comes from that address with the reply token of o, the event it
// answers (tokenVouches). A message merely claiming the address is
// anyone's.
func (s *Store) vouched(c heldContact, ev domain.Event, sender domain.Sender, o domain.Event) (string, error) {
	if sender.Address != "" && strings.EqualFold(sender.Address, c.Address) {
		return cmp.Or(sender.How, "transport"), nil
	}
	if !strings.EqualFold(ev.Message.From, c.Address) {
		return "", nil
	}
	ok, err := s.tokenVouches(c.WorkerID, o, ev.Message.Subject)
	if err != nil || !ok {
		return "", err
	}
	return "reply-token", nil
}

// unverifiedHead heads the relayed text of a message to worker's contact
// address nobody showed to be worker's.
func unverifiedHead(worker, from string) string {
	return "Unverified sender " + cmp.Or(from, "(no address)") + ", not shown to be " + worker + ":\n\n"
}

// answered is the event an answer on a contact stream answers: the one
// whose relayed copy the chat message replies to (the delivery that
// posted it has the remote id its inReplyTo or thread names), else the
// one an email subject's tag names, else the last one relayed.
func answered(tx *gorm.DB, stream string, m domain.Message) (string, error) {
	for _, ref := range []string{m.InReplyTo, m.ThreadID} {
		if ref == "" {
			continue
		}
		var ids []string
		err := tx.Table("deliveries").Joins("JOIN events ON events.id = deliveries.event_id").
			Where("deliveries.stream_id = ? AND deliveries.remote_id = ?", stream, ref).
			Order("deliveries.id DESC").Limit(1).Pluck("events.caused_by", &ids).Error
		if err != nil {
			return "", err
		}
		if len(ids) == 1 && ids[0] != "" {
			return ids[0], nil
		}
	}
	if tag := relayTag().FindStringSubmatch(m.Subject); tag != nil {
		return tag[1], nil
	}
	var last []string
	err := tx.Model(&eventRow{}).Where("stream_id = ? AND source <> ''", stream).Order("seq DESC").Limit(1).Pluck("caused_by", &last).Error
	if err != nil || len(last) == 0 {
		return "", err
	}
	return last[0], nil
}

// cut keeps a relayed text within a limit the original was allowed to
// exceed, so relaying never fails the append it rides on.
func cut(s string, n int) string {
	const more = " … (cut)"
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-len(more)], "") + more
}

// WorkerContact is a human worker's contact channel as an export holds
// it.
type WorkerContact struct {
	Worker string
	Contact
	UpdatedBy string
	UpdatedAt time.Time
}

// ExportContacts returns every contact channel, by worker, for an export.
func (s *Store) ExportContacts(ctx context.Context) ([]WorkerContact, error) {
	var rows []contactRow
	if err := s.read(ctx).Order("worker_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("export contacts: %w", err)
	}
	return mapRows(rows, func(r contactRow) WorkerContact {
		return WorkerContact{Worker: r.WorkerID, Contact: Contact{Kind: r.Kind, Address: r.Address}, UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt.UTC()}
	}), nil
}

// Contact writes a human worker's contact channel as exported. Its
// stream, s-contact-<worker>, comes with the streams and must be there.
func (im *Importer) Contact(c WorkerContact) error {
	what := "contact of " + c.Worker
	if _, err := im.s.contactTransport(c.Worker, c.Contact); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var w workerRow
	if err := im.tx.Where("id = ?", c.Worker).Take(&w).Error; err != nil {
		return fmt.Errorf("%s: %w", what, notFoundOr(err, "worker", c.Worker))
	}
	if w.Kind != string(domain.WorkerHuman) {
		return fmt.Errorf("%s: %w", what, domain.Invalid("worker", "%s is an AI worker; only a human worker has a contact channel", c.Worker))
	}
	stream := ContactStreamPrefix + c.Worker
	var n int64
	if err := im.tx.Model(&streamRow{}).Where("id = ? AND transport_kind = ?", stream, c.Kind).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: no %s stream %s among the streams: %w", what, c.Kind, stream, domain.ErrNotFound)
	}
	return im.create("contacts", &contactRow{WorkerID: c.Worker, Kind: c.Kind, Address: c.Address, StreamID: stream,
		UpdatedBy: c.UpdatedBy, UpdatedAt: c.UpdatedAt})
}
