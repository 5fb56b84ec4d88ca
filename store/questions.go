package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// A question a worker asks a person (ask_human) is a message on the DM
// stream the two share, naming the person in `to`, so it reaches them
// wherever a DM does: the web UI's inbox and their contact channel
// (relayContacts). When it expects a reply it is also a row here, open
// until the person answers it; the answer — from their channel or the
// inbox — quotes the question, so the asker, woken by it, reads both.

type questionRow struct {
	EventID  string `gorm:"primaryKey"`
	StreamID string `gorm:"not null"`
	Asker    string `gorm:"not null"`
	Person   string `gorm:"not null;index"`
	Text     string `gorm:"not null"`
	// AnswerID is the person's answer, "" while the question is open.
	AnswerID   string `gorm:"not null;default:''"`
	AskedAt    time.Time
	AnsweredAt *time.Time
}

func (questionRow) TableName() string { return "questions" }

// Ask is what ask_human asks of the store.
type Ask struct {
	Asker, Person, Text string
	// ExpectsReply makes it a question that stays open until answered;
	// without it the message is a notice.
	ExpectsReply bool
	// CausedBy is the asker's activation, if any (its label carries on).
	CausedBy string
	MaxBody  int
	// Task is the spec task a planner's clarifying question is about: the
	// task waits for the answer (spectask_clarify.go).
	Task string
}

// AskExtra is the extra of an ask_human message: "question" or "notice".
type AskExtra struct {
	Ask string `json:"ask"`
}

// QuotedQuestion is what an answer's extra holds under "question".
type QuotedQuestion struct {
	ID    string `json:"id"`
	Asker string `json:"asker"`
	Text  string `json:"text"`
}

// AskHuman puts a question or a notice to a hired human worker on the DM
// stream the asker shares with them, with them in `to`.
func (s *Store) AskHuman(ctx context.Context, a Ask) (domain.Event, error) {
	p, err := s.GetWorker(ctx, a.Person)
	if err != nil {
		return domain.Event{}, err
	}
	if p.Kind != domain.WorkerHuman {
		return domain.Event{}, domain.Invalid("person", "%s is an AI worker; ask_human asks a person (message an AI worker with dm)", a.Person)
	}
	if p.DismissedAt != nil {
		return domain.Event{}, domain.Invalid("person", "%s is dismissed", a.Person)
	}
	if a.Task != "" {
		// Checked before the DM is made, so a refused question leaves nothing.
		if _, err := checkClarifyTx(s.read(ctx), a); err != nil {
			return domain.Event{}, fmt.Errorf("ask %s: %w", a.Person, err)
		}
	}
	dm, err := s.EnsureDM(ctx, a.Asker, a.Person)
	if err != nil {
		return domain.Event{}, err
	}
	kind, subject := "notice", "Notice from "+a.Asker
	if a.ExpectsReply {
		kind, subject = "question", "Question from "+a.Asker
	}
	extra, _ := json.Marshal(AskExtra{Ask: kind})
	ev := domain.Event{StreamID: dm.ID, Source: a.Asker, CausedBy: a.CausedBy,
		Message: domain.Message{From: a.Asker, To: []string{a.Person}, Subject: subject, Body: a.Text, Extra: extra}}
	err = s.write(ctx, func(tx *gorm.DB) error {
		var task specTaskRow
		if a.Task != "" {
			if task, err = checkClarifyTx(tx, a); err != nil {
				return err
			}
		}
		if ev, err = s.appendTx(tx, ev, AppendOptions{MaxBody: a.MaxBody}); err != nil || !a.ExpectsReply {
			return err
		}
		if err := tx.Create(&questionRow{EventID: ev.ID, StreamID: dm.ID, Asker: a.Asker, Person: a.Person, Text: a.Text, AskedAt: ev.CreatedAt}).Error; err != nil {
			return err
		}
		if a.Task != "" {
			return s.clarifyTx(tx, task, a, ev)
		}
		return nil
	})
	if err != nil {
		return domain.Event{}, fmt.Errorf("ask %s: %w", a.Person, err)
	}
	return ev, nil
}

// quoteQuestion runs in every append of a message answering something
// (inReplyTo): when that is a question on the same stream, the answer's
// extra quotes it, and the person's own answer closes it. It returns the
// question's row when the answer closes it, for closeQuestion after the
// insert.
func quoteQuestion(tx *gorm.DB, ev *domain.Event) (*questionRow, error) {
	if ev.Message.InReplyTo == "" {
		return nil, nil
	}
	var qs []questionRow
	if err := tx.Where("event_id = ? AND stream_id = ?", ev.Message.InReplyTo, ev.StreamID).Limit(1).Find(&qs).Error; err != nil || len(qs) == 0 {
		return nil, err
	}
	q := qs[0]
	extra := map[string]json.RawMessage{}
	// An extra that is no object, or has no room, is the sender's own: it
	// is left as it is, and the answer still closes the question.
	if len(ev.Message.Extra) == 0 || json.Unmarshal(ev.Message.Extra, &extra) == nil && len(ev.Message.Extra) < domain.MaxExtra-2*maxQuote {
		extra["question"], _ = json.Marshal(QuotedQuestion{ID: q.EventID, Asker: q.Asker, Text: cut(q.Text, maxQuote)})
		ev.Message.Extra, _ = json.Marshal(extra)
	}
	if ev.Source != q.Person || q.AnswerID != "" {
		return nil, nil // quoted, but only the person's first answer closes it
	}
	return &q, nil
}

// maxQuote bounds the question an answer quotes: enough to know what was
// asked, whatever the body limit was when it was.
const maxQuote = 4 << 10

// closeQuestion records ev as the answer to q, once.
func closeQuestion(tx *gorm.DB, q *questionRow, ev domain.Event) error {
	if q == nil {
		return nil
	}
	at := ev.CreatedAt
	return tx.Model(&questionRow{}).Where("event_id = ? AND answer_id = ''", q.EventID).
		Updates(map[string]any{"answer_id": ev.ID, "answered_at": &at}).Error
}

// OpenQuestions says which of ids are questions still waiting for their
// answer.
func (s *Store) OpenQuestions(ctx context.Context, ids []string) (map[string]bool, error) {
	open := map[string]bool{}
	if len(ids) == 0 {
		return open, nil
	}
	var got []string
	if err := s.read(ctx).Model(&questionRow{}).Where("event_id IN ? AND answer_id = ''", ids).Pluck("event_id", &got).Error; err != nil {
		return nil, fmt.Errorf("open questions: %w", err)
	}
	for _, id := range got {
		open[id] = true
	}
	return open, nil
}
