package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Notify appends a system message to a worker's inbox stream, creating the
// stream (with the worker subscribed) on first use. An AI worker is woken
// by it like by any event on a stream it follows; a person sees it in the
// web UI's inbox. causedBy names what the notice is about (an approval
// request, an activation), so a reader can follow it back.
func (s *Store) Notify(ctx context.Context, worker string, msg domain.Message, causedBy string) (domain.Event, error) {
	var ev domain.Event
	err := s.write(ctx, func(tx *gorm.DB) error {
		var err error
		ev, err = s.notifyTx(tx, worker, msg, causedBy)
		return err
	})
	if err != nil {
		return domain.Event{}, fmt.Errorf("notify %s: %w", worker, err)
	}
	return ev, nil
}

// notifyTx is Notify inside a caller's transaction, so a notice commits
// with the change it reports or not at all.
func (s *Store) notifyTx(tx *gorm.DB, worker string, msg domain.Message, causedBy string) (domain.Event, error) {
	return s.notifyLabelTx(tx, worker, msg, causedBy, domain.Label{})
}

// notifyLabelTx is notifyTx for a notice that quotes something labelled
// (an approval's arguments and result): it carries label on.
func (s *Store) notifyLabelTx(tx *gorm.DB, worker string, msg domain.Message, causedBy string, label domain.Label) (domain.Event, error) {
	stream, err := s.ensureInboxTx(tx, worker)
	if err != nil {
		return domain.Event{}, err
	}
	if msg.From == "" {
		msg.From = "helix-org"
	}
	return s.appendTx(tx, domain.Event{StreamID: stream, CausedBy: causedBy, Message: msg}, AppendOptions{label: label})
}

// ensureInboxTx creates a worker's inbox and subscribes the worker to it,
// once. Both are idempotent, so concurrent first notices agree.
func (s *Store) ensureInboxTx(tx *gorm.DB, worker string) (string, error) {
	id := domain.InboxStream(worker)
	ok, err := exists(tx, &streamRow{}, id)
	if err != nil || ok {
		return id, err
	}
	if ok, err := exists(tx, &workerRow{}, worker); err != nil || !ok {
		return "", orNotFound(err, "worker", worker)
	}
	row := streamRow{ID: id, Name: "inbox " + worker,
		Description:   "Inbox of " + worker + ": approval requests and their outcomes, budget and loop incidents. Only the system writes here.",
		TransportKind: string(domain.TransportLocal), TransportConfig: "{}", CreatedAt: s.Now()}
	if err := tx.Create(&row).Error; err != nil {
		return "", err
	}
	return id, tx.Create(&subscriptionRow{WorkerID: worker, StreamID: id, CreatedAt: s.Now()}).Error
}
