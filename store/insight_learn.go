package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// learnQuestionRow is one question of the learn step: one per failed run,
// or one per troubled item of a spec task. ActivationID is what it is
// about, so nothing is asked twice: the run, or the item ("t-login/3"),
// with the item's last run in RunID.
type learnQuestionRow struct {
	ID           string `gorm:"primaryKey"`
	ActivationID string `gorm:"not null;uniqueIndex"`
	RunID        string
	TaskID       string
	ItemSeq      int
	WorkerID     string `gorm:"not null"`
	Reviewer     string `gorm:"not null"`
	Situation    string `gorm:"not null"`
	Error        string `gorm:"not null"`
	Used         string `gorm:"not null"`
	Notice       string `gorm:"not null"`
	InsightID    string `gorm:"not null"`
	AskedAt      time.Time
}

func (learnQuestionRow) TableName() string { return "learn_questions" }

func (r learnQuestionRow) toDomain() domain.LearnQuestion {
	q := domain.LearnQuestion{ID: r.ID, Activation: r.ActivationID, Worker: r.WorkerID, Reviewer: r.Reviewer, Situation: r.Situation,
		Error: r.Error, Used: strings.Fields(r.Used), Notice: r.Notice, Insight: r.InsightID, AskedAt: r.AskedAt.UTC(), Task: r.TaskID, Item: r.ItemSeq}
	if r.TaskID != "" {
		q.Activation = r.RunID
	}
	return q
}

// maxSituation bounds the quoted situation: a question, not a transcript.
const maxSituation = 400

// Learn asks reviewer, in its inbox, one question about each failed run
// of worker (below reviewer) not asked about before: the run's error, what
// it was working on and the insights it used, with the ways to answer. It
// returns the questions asked.
func (s *Store) Learn(ctx context.Context, reviewer, worker string) ([]domain.LearnQuestion, error) {
	var out []domain.LearnQuestion
	err := s.write(ctx, func(tx *gorm.DB) error {
		if reviewer == worker {
			return domain.Forbidden("%s cannot review its own runs; a worker above it (or %s) can", worker, domain.OwnerWorker)
		}
		a := newAuthz(tx)
		if _, err := a.seat(worker); err != nil {
			return err
		}
		if err := a.manages(reviewer, worker); err != nil {
			return err
		}
		var acts []activationRow
		if err := tx.Where("worker_id = ? AND status = ? AND id NOT IN (SELECT activation_id FROM learn_questions UNION SELECT run_id FROM learn_questions WHERE run_id <> '')", worker, string(domain.ActivationFailed)).
			Order("started_at").Limit(20).Find(&acts).Error; err != nil {
			return fmt.Errorf("failed runs of %s: %w", worker, err)
		}
		for _, a := range acts {
			q, err := s.ask(tx, reviewer, a)
			if err != nil {
				return err
			}
			out = append(out, q)
		}
		return nil
	})
	return out, err
}

// ask puts one question about a failed run in the reviewer's inbox.
func (s *Store) ask(tx *gorm.DB, reviewer string, a activationRow) (domain.LearnQuestion, error) {
	situation, err := runSituation(tx, a.ID)
	if err != nil {
		return domain.LearnQuestion{}, err
	}
	var used []string
	if err := tx.Model(&insightUseRow{}).Where("activation_id = ? AND utilized", a.ID).Order("insight_id").Pluck("insight_id", &used).Error; err != nil {
		return domain.LearnQuestion{}, err
	}
	row := learnQuestionRow{ID: "q-" + domain.RandomSlug(10), ActivationID: a.ID, WorkerID: a.WorkerID, Reviewer: reviewer,
		Situation: situation, Error: a.Error, Used: strings.Join(used, " "), AskedAt: s.Now()}
	ev, err := s.notifyTx(tx, reviewer, domain.Message{Subject: fmt.Sprintf("What should %s do next time? (%s)", a.WorkerID, row.ID),
		Body: questionBody(tx, row)}, a.ID)
	if err != nil {
		return domain.LearnQuestion{}, err
	}
	row.Notice = ev.ID
	if err := tx.Create(&row).Error; err != nil {
		return domain.LearnQuestion{}, fmt.Errorf("record question %s: %w", row.ID, err)
	}
	return row.toDomain(), nil
}

// runSituation quotes what a run was woken for: its triggers' subjects
// and bodies, on one line (a hire is no situation to learn from).
func runSituation(tx *gorm.DB, activation string) (string, error) {
	var bodies []string
	if err := tx.Model(&eventRow{}).Where("seq IN (SELECT event_seq FROM triggers WHERE activation_id = ? AND kind <> ?)", activation, string(domain.TriggerHire)).Order("seq").Pluck("body", &bodies).Error; err != nil {
		return "", fmt.Errorf("triggers of %s: %w", activation, err)
	}
	var parts []string
	for _, b := range bodies {
		var m domain.Message
		if json.Unmarshal([]byte(b), &m) == nil {
			parts = append(parts, strings.TrimSpace(m.Subject+" "+m.Body))
		}
	}
	text := strings.Join(strings.Fields(strings.Join(parts, " / ")), " ")
	if len(text) > maxSituation {
		text = text[:maxSituation] + "…"
	}
	return text, nil
}

// questionBody is the question: the evidence, then the ways to answer.
func questionBody(tx *gorm.DB, q learnQuestionRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s's run %s failed: %s\n", q.WorkerID, q.ActivationID, q.Error)
	fmt.Fprintf(&b, "It was working on: %s\n", q.Situation)
	used := strings.Fields(q.Used)
	if len(used) == 0 {
		b.WriteString("It used no insight.\n")
	}
	for _, id := range used {
		if in, err := getInsight(tx, id); err == nil {
			fmt.Fprintf(&b, "It followed %s: when %s → %s\n", id, in.Trigger, in.Resolution)
		}
	}
	b.WriteString("\nAnswer with one of:\n")
	fmt.Fprintf(&b, "1. what to do next time: store_insight {\"question\": %q, \"resolution\": \"…\", \"type\": \"pattern\"} (stored for %s's role, tagged %s)\n",
		q.ID, q.WorkerID, domain.TagUserProvided)
	for _, id := range used {
		fmt.Fprintf(&b, "2. the advice it followed was wrong: correct_insight {\"id\": %q, \"resolution\": \"…\", \"reason\": \"…\"}\n", id)
	}
	return b.String()
}

// AnswerQuestion stores a reviewer's answer to a learn question as an
// insight: by default about the question's situation, for the worker's
// role, tagged user-provided and starting with UserProvidedPrior credit.
func (s *Store) AnswerQuestion(ctx context.Context, actor, question string, in domain.Insight, threshold float64) (domain.Insight, error) {
	var out domain.Insight
	err := s.write(ctx, func(tx *gorm.DB) error {
		var q learnQuestionRow
		if err := tx.Where("id = ?", question).Take(&q).Error; err != nil {
			return notFoundOr(err, "question", question)
		}
		if q.InsightID != "" {
			return fmt.Errorf("question %s was answered with %s; correct that insight instead: %w", q.ID, q.InsightID, domain.ErrConflict)
		}
		if actor != q.Reviewer && actor != domain.OwnerWorker && actor != "" {
			return domain.Forbidden("question %s was asked of %s; only it (or %s) answers it", q.ID, q.Reviewer, domain.OwnerWorker)
		}
		seat, err := insightSeat(tx, q.WorkerID)
		if err != nil {
			return err
		}
		if in.Trigger == "" {
			in.Trigger = q.Situation
		}
		if in.Scope == "" {
			in.Scope, in.Target = domain.ScopeRole, seat.Role
		}
		in.Tags = append(in.Tags, domain.TagUserProvided)
		in.ID, in.Version, in.StoredBy = s.newInsightID(), 1, actor
		in.Stats = domain.InsightStats{CreditHelped: domain.UserProvidedPrior}
		if err := in.Validate(); err != nil {
			return err
		}
		row, err := s.insertInsight(tx, in)
		if err != nil {
			return err
		}
		prior := insightCreditRow{Source: sourcePrior, InsightID: row.ID, Cited: row.ID, Outcome: string(domain.OutcomeHelped), Weight: domain.UserProvidedPrior, At: row.CreatedAt}
		if err := tx.Create(&prior).Error; err != nil {
			return err
		}
		if err := restatTx(tx, row.ID); err != nil {
			return err
		}
		row.CreditHelped = domain.UserProvidedPrior
		out = row.toDomain()
		if err := s.linkNew(tx, actor, out, threshold); err != nil {
			return err
		}
		return tx.Model(&learnQuestionRow{}).Where("id = ?", q.ID).Update("insight_id", row.ID).Error
	})
	return out, err
}
