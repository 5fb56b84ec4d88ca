package store

import (
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Learning from successes. When the reviewer accepts a task's work, each
// delivered item becomes a proposed pattern insight: in the item's
// situation, what its builder did (its report, how it was verified). A
// proposal is quarantined — shown marked, never a constraint, injected
// into no prompt unasked — until a person confirms it (endorse_insight);
// the reviewer is asked to. Every session of a task (its run to done or
// cancelled) ends with one event on the task's stream saying which
// insights it stored, or "nothing new" and why.

// patternDuplicate is how alike a proposal and a current insight must be
// for the proposal to be nothing new.
const patternDuplicate = 0.9

// sessionEnd is the extra of the event that ends a task's session.
type sessionEnd struct {
	Task    string   `json:"task"`
	Learned []string `json:"learned,omitempty"`
	// NothingNew says why nothing was stored; empty when something was.
	NothingNew string `json:"nothingNew,omitempty"`
}

// endSessionTx is the learn step at a task's end: patterns proposed from
// the accepted deliveries (when accepted), failures and questions from the
// troubled items, and the session's closing event.
func (s *Store) endSessionTx(tx *gorm.DB, row specTaskRow, actor, causedBy string, accepted bool) error {
	var proposed, known []string
	var why []string
	if accepted {
		var err error
		if proposed, known, why, err = s.proposePatternsTx(tx, row, causedBy); err != nil {
			return err
		}
	} else {
		why = append(why, "the task was cancelled, so no delivery was accepted to learn a pattern from")
	}
	_, failures, err := s.learnTaskTx(tx, row, causedBy)
	if err != nil {
		return err
	}
	end := sessionEnd{Task: row.ID, Learned: append(proposed, failures...)}
	subject := fmt.Sprintf("%s: learned %d insights", row.ID, len(end.Learned))
	body := fmt.Sprintf("Session of %s ended: %d patterns proposed from accepted work (quarantined until a person confirms them), "+
		"%d failures stored from blocked or retried items.", row.ID, len(proposed), len(failures))
	if len(end.Learned) == 0 {
		if len(known) > 0 {
			why = append(why, "what worked is already stored: "+strings.Join(known, ", "))
		}
		why = append(why, "no blocked or retried item left a lesson not asked about already")
		end.NothingNew = strings.Join(why, "; ")
		subject, body = row.ID+": nothing new", "Nothing new learned from "+row.ID+": "+end.NothingNew+"."
	}
	extra, _ := json.Marshal(end)
	_, err = s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(row.ID), Source: actor, CausedBy: causedBy, Message: domain.Message{
		From: "helix-org", Subject: subject, Body: body, BodyContentType: "text/plain", Extra: extra}}, AppendOptions{})
	return err
}

// proposePatternsTx proposes one pattern per accepted delivery that is
// not already stored, and asks the reviewer to confirm them. It returns
// the proposals, the current insights that already said the same, and
// why items gave none.
func (s *Store) proposePatternsTx(tx *gorm.DB, row specTaskRow, causedBy string) (proposed, known, why []string, err error) {
	items, err := taskItems(tx, row.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	asked, err := troubledSeqs(tx, row.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	var lines []string
	ticked, questioned := 0, 0
	for _, it := range items {
		if it.State != domain.ItemDone {
			continue
		}
		if it.Worker == "" || strings.HasPrefix(it.Summary, "marked done in a commit") {
			ticked++
			continue
		}
		if asked[it.Seq] {
			questioned++ // the reviewer's question about the troubled item offers what it did as the answer
			continue
		}
		in, dup, err := s.proposeTx(tx, row, it)
		if err != nil {
			return nil, nil, nil, err
		}
		if dup != "" {
			known = append(known, dup)
			continue
		}
		proposed = append(proposed, in.ID)
		lines = append(lines, fmt.Sprintf("- %s (item %d, %s): when %s → %s\n  confirm: endorse_insight {\"id\": %q}; or correct_insight {\"id\": %q, \"resolution\": \"…\", \"reason\": \"…\"}",
			in.ID, it.Seq, it.Worker, in.Trigger, in.Resolution, in.ID, in.ID))
	}
	if questioned > 0 {
		why = append(why, fmt.Sprintf("%d items that got past a blocked one are the reviewer's question instead", questioned))
	}
	if ticked > 0 {
		why = append(why, fmt.Sprintf("%d items were only ticked in progress.md, with no report of what worked", ticked))
	}
	if len(proposed) == 0 {
		return proposed, known, why, nil
	}
	_, err = s.notifyTx(tx, row.Reviewer, domain.Message{Subject: fmt.Sprintf("Confirm what worked in %s (%d proposed patterns)", row.ID, len(proposed)),
		Body: fmt.Sprintf("You accepted the work of spec task %s, %q. What each delivered item did is proposed as a pattern for its builder's role; "+
			"each is quarantined (shown marked, never a constraint) until you confirm it:\n\n%s\n", row.ID, row.Title, strings.Join(lines, "\n")),
		BodyContentType: "text/markdown"}, causedBy)
	return proposed, known, why, err
}

// proposeTx stores one delivered item's pattern, quarantined, unless a
// current insight already says the same (its id is returned instead).
func (s *Store) proposeTx(tx *gorm.DB, row specTaskRow, it domain.TaskItem) (domain.Insight, string, error) {
	situation := it.Title
	if d := strings.TrimSpace(it.Description); d != "" {
		situation += ". " + d
	}
	res := "What worked: " + strings.TrimSpace(it.Summary)
	for _, d := range [][2]string{{"Framework", it.Framework}, {"Idioms", strings.Join(it.Idioms, "; ")}, {"Verified with", it.Verify}} {
		if d[1] != "" {
			res += fmt.Sprintf(" %s: %s.", d[0], d[1])
		}
	}
	in := domain.Insight{ID: s.newInsightID(), Version: 1, Trigger: cutText(situation, maxSituation),
		Resolution: cutText(res, domain.MaxInsightText), Type: domain.InsightPattern, Tags: []string{"spec-task", row.ID, "proposed"},
		Scope: domain.ScopeOrg, StoredBy: row.Reviewer,
		Label: domain.Untrusted(fmt.Sprintf("proposed by the learn step of %s from item %d; a person confirms it with endorse_insight", row.ID, it.Seq))}
	if seat, err := insightSeat(tx, it.Worker); err == nil {
		in.Scope, in.Target = domain.ScopeRole, seat.Role
	}
	if dup, err := s.knownPatternTx(tx, in); err != nil || dup != "" {
		return in, dup, err
	}
	if err := tx.Model(&itemRunRow{}).Where("task_id = ? AND seq = ?", row.ID, it.Seq).Pluck("run_id", &in.Activation).Error; err != nil {
		return in, "", err
	}
	if err := in.Validate(); err != nil {
		return in, "", err
	}
	r, err := s.insertInsight(tx, in)
	if err != nil {
		return in, "", err
	}
	return r.toDomain(), "", nil
}

// cutText keeps text within n bytes, marking the cut.
func cutText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return text[:n-len("…")] + "…"
}

// troubledSeqs are the items the learn step's questions cover: those with
// lessons of their own and those a re-plan put in a blocked one's place.
func troubledSeqs(tx *gorm.DB, task string) (map[int]bool, error) {
	var lessons []itemLessonRow
	if err := tx.Where("task_id = ?", task).Find(&lessons).Error; err != nil {
		return nil, fmt.Errorf("lessons of %s: %w", task, err)
	}
	out := map[int]bool{}
	for _, l := range lessons {
		out[l.Seq] = true
		var by []int
		if json.Unmarshal([]byte(l.ReplacedBy), &by) == nil {
			for _, s := range by {
				out[s] = true
			}
		}
	}
	return out, nil
}

// proposeRunTx is learning from one accepted run outside a spec task's
// items: a person rated it helped and said why, so what worked is
// proposed for the worker's role, quarantined like an item's pattern. It
// returns the proposal's id, or "" when there is nothing to propose (no
// note, a spec-task item's run, no situation, or already stored).
func (s *Store) proposeRunTx(tx *gorm.DB, run activationRow, o domain.RunOutcome) (string, error) {
	if o.Outcome != domain.OutcomeHelped || strings.TrimSpace(o.Note) == "" {
		return "", nil
	}
	var items int64
	if err := tx.Model(&itemRunRow{}).Where("run_id = ?", run.ID).Count(&items).Error; err != nil || items > 0 {
		return "", err // an item's run: its pattern is proposed when the task's work is accepted
	}
	situation, err := runSituation(tx, run.ID)
	if err != nil || situation == "" {
		return "", err
	}
	in := domain.Insight{ID: s.newInsightID(), Version: 1, Trigger: situation,
		Resolution: cutText("What worked: "+strings.TrimSpace(o.Note), domain.MaxInsightText), Type: domain.InsightPattern,
		Tags: []string{"rated", "proposed"}, Scope: domain.ScopeOrg, StoredBy: o.By, Activation: run.ID,
		Label: domain.Untrusted(fmt.Sprintf("proposed from run %s, rated helped by %s; a person confirms it with endorse_insight", run.ID, o.By))}
	if seat, err := insightSeat(tx, run.WorkerID); err == nil {
		in.Scope, in.Target = domain.ScopeRole, seat.Role
	}
	if dup, err := s.knownPatternTx(tx, in); err != nil || dup != "" {
		return "", err
	}
	if err := in.Validate(); err != nil {
		return "", err
	}
	r, err := s.insertInsight(tx, in)
	return r.ID, err
}

// knownPatternTx is a current pattern that already says what in says.
func (s *Store) knownPatternTx(tx *gorm.DB, in domain.Insight) (string, error) {
	ranked, err := s.rank(tx, in.Text(), nil, nil, domain.RankBaseline, 5)
	if err != nil {
		return "", err
	}
	for _, r := range ranked {
		if r.Insight.Current() && r.Insight.Type == domain.InsightPattern && domain.Similarity(in.Trigger+" "+in.Resolution, r.Insight.Trigger+" "+r.Insight.Resolution) >= patternDuplicate {
			return r.Insight.ID, nil
		}
	}
	return "", nil
}
