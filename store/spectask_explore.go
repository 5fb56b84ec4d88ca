package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// The explore phase of a spec task on an existing repository. The tools
// list the repository and split it (domain.PartitionRepo); here each
// partition is handed to its explorer, its report is recorded with its
// coverage, and once every partition is in — reported, or its run ended
// without a report — the planner is woken with the whole exploration.
// How to explore is the explorers' role text; the core keeps only the
// phase, the partitions and what was covered.

// TaskStart is what create_spec_task found in the task's repository.
type TaskStart struct {
	// Parts are the partitions to explore; none skips the phase.
	Parts []domain.ExplorePart
	// Greenfield says the repository has no files: the start says so.
	Greenfield bool
}

type exploreRow struct {
	TaskID     string `gorm:"primaryKey"`
	Part       int    `gorm:"primaryKey;autoIncrement:false"`
	Worker     string `gorm:"not null;index"`
	Areas      string `gorm:"not null"`
	Files      int    `gorm:"not null"`
	Budget     int    `gorm:"not null"`
	State      string `gorm:"not null"`
	Summary    string `gorm:"not null;default:''"`
	Read       string `gorm:"not null;default:''"`
	Unknown    string `gorm:"not null;default:''"`
	Coverage   float64
	HandoutSeq int64 `gorm:"index"`
	ReportedAt *time.Time
}

func (exploreRow) TableName() string { return "spec_task_explorations" }

func (r exploreRow) toDomain() domain.ExplorePart {
	p := domain.ExplorePart{Part: r.Part, Worker: r.Worker, Files: r.Files, Budget: r.Budget, State: domain.ExploreState(r.State),
		Summary: r.Summary, Coverage: r.Coverage}
	json.Unmarshal([]byte(r.Areas), &p.Areas)
	json.Unmarshal([]byte(r.Read), &p.Read)
	json.Unmarshal([]byte(r.Unknown), &p.Unknown)
	return p
}

func exploreRowOf(task string, p domain.ExplorePart) exploreRow {
	js := func(v []string) string {
		if len(v) == 0 {
			return ""
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return exploreRow{TaskID: task, Part: p.Part, Worker: p.Worker, Areas: js(p.Areas), Files: p.Files, Budget: p.Budget,
		State: string(p.State), Summary: p.Summary, Read: js(p.Read), Unknown: js(p.Unknown), Coverage: p.Coverage}
}

func explorations(db *gorm.DB, task string) ([]domain.ExplorePart, error) {
	var rows []exploreRow
	if err := db.Where("task_id = ?", task).Order("part").Find(&rows).Error; err != nil {
		return nil, err
	}
	return mapRows(rows, exploreRow.toDomain), nil
}

// exploreMove is the extra of an exploration event on the task's stream.
type exploreMove struct {
	Task     string              `json:"task"`
	Part     int                 `json:"part"`
	State    domain.ExploreState `json:"state"`
	Worker   string              `json:"worker"`
	Coverage float64             `json:"coverage"`
	Unknown  []string            `json:"unknown,omitempty"`
}

// exploreTx starts the phase: the task moves to exploration and each
// partition goes to its explorer's inbox.
func (s *Store) exploreTx(tx *gorm.DB, row specTaskRow, actor string, parts []domain.ExplorePart) error {
	files := 0
	for _, p := range parts {
		files += p.Files
	}
	ev, err := s.moveTx(tx, &row, actor, domain.ActExplore, fmt.Sprintf("Exploring %s before planning: %d files in %d partitions.",
		row.Repo, files, len(parts)))
	if err != nil {
		return err
	}
	for _, p := range parts {
		p.State = domain.ExploreOpen
		body := fmt.Sprintf("You explore part %d of %d of the repository of spec task %s, %q, before its planner plans it.\n\n"+
			"Repository: %s\nAreas (top-level directories; %q is the files at the root): %s\nFiles: %d\nBudget: at most %d tool calls.\n\n"+
			"## Prompt\n\n%s\n\nReport once with report_exploration: task %q, part %d, a summary of what exists that the prompt touches "+
			"(structure, frameworks, idioms, tests, how to verify), and read: the areas you actually read. Areas you do not name count as unknown.",
			p.Part, len(parts), row.ID, row.Title, row.Repo, domain.RootArea, strings.Join(p.Areas, ", "), p.Files, p.Budget, row.Prompt, row.ID, p.Part)
		notice, err := s.notifyItemTx(tx, p.Worker, row, ev.ID, fmt.Sprintf("explore part %d", p.Part), 0, body)
		if err != nil {
			return err
		}
		r := exploreRowOf(row.ID, p)
		r.HandoutSeq = notice.Seq
		if err := tx.Create(&r).Error; err != nil {
			return fmt.Errorf("partition %d of %s: %w", p.Part, row.ID, err)
		}
		if err := s.exploreMovedTx(tx, row.ID, "", p); err != nil {
			return err
		}
	}
	return nil
}

// ReportExploration is an explorer's report on its partition: what
// exists, and which of its areas it read (the rest are unknown).
func (s *Store) ReportExploration(ctx context.Context, actor, id string, part int, summary string, read []string) (domain.ExplorePart, error) {
	if strings.TrimSpace(summary) == "" {
		return domain.ExplorePart{}, domain.Required("summary")
	}
	var got domain.ExplorePart
	err := s.write(ctx, func(tx *gorm.DB) error {
		row, err := lockTask(tx, id)
		if err != nil {
			return err
		}
		if row.State != string(domain.TaskExploration) {
			return fmt.Errorf("%w: %s is in state %q; partitions are reported in %q", domain.ErrConflict, id, row.State, domain.TaskExploration)
		}
		var r exploreRow
		if err := tx.Where("task_id = ? AND part = ?", id, part).Take(&r).Error; err != nil {
			return notFoundOr(err, "partition", fmt.Sprintf("%s/%d", id, part))
		}
		if r.Worker != actor {
			return domain.Forbidden("part %d of %s is %s's to explore, not %s's", part, id, r.Worker, actor)
		}
		if r.State != string(domain.ExploreOpen) {
			return fmt.Errorf("%w: part %d of %s is already %s", domain.ErrConflict, part, id, r.State)
		}
		if err := labelDocsTx(tx, &row); err != nil {
			return err
		}
		got = r.toDomain()
		got.Cover(summary, read)
		return s.settlePartTx(tx, row, actor, r, got)
	})
	if err != nil {
		return domain.ExplorePart{}, fmt.Errorf("report exploration of %s part %d: %w", id, part, err)
	}
	return got, nil
}

// settlePartTx records a partition's end and, when it was the last one
// open, wakes the planner with the exploration.
func (s *Store) settlePartTx(tx *gorm.DB, row specTaskRow, actor string, old exploreRow, p domain.ExplorePart) error {
	r := exploreRowOf(row.ID, p)
	now := s.Now()
	r.HandoutSeq, r.ReportedAt = old.HandoutSeq, &now
	if err := tx.Save(&r).Error; err != nil {
		return err
	}
	if err := s.exploreMovedTx(tx, row.ID, actor, p); err != nil {
		return err
	}
	parts, err := explorations(tx, row.ID)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(parts, func(p domain.ExplorePart) bool { return p.State == domain.ExploreOpen }) {
		return nil
	}
	read, areas := coverage(parts)
	ev, err := s.moveTx(tx, &row, actor, domain.ActStart, fmt.Sprintf("Exploration done: %d of %d areas read. Spec generation started for: %s",
		read, areas, row.Title))
	if err != nil {
		return err
	}
	return s.askPlannerTx(tx, row, ev.ID, explorationText(parts))
}

func coverage(parts []domain.ExplorePart) (read, areas int) {
	for _, p := range parts {
		read += len(p.Read)
		areas += len(p.Areas)
	}
	return read, areas
}

// explorationText is what the planner reads of the exploration: each
// partition's findings and, for every area, whether it was read.
func explorationText(parts []domain.ExplorePart) string {
	read, areas := coverage(parts)
	var b strings.Builder
	fmt.Fprintf(&b, "## Exploration\n\nCoverage: %d of %d areas read.", read, areas)
	var unknown []string
	for _, p := range parts {
		unknown = append(unknown, p.Unknown...)
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, " Unknown (not read; plan with care or explore them in an item): %s.", strings.Join(unknown, ", "))
	}
	b.WriteString("\n\n")
	for _, p := range parts {
		fmt.Fprintf(&b, "### Part %d (%s, %d files): %s\n\n", p.Part, p.Worker, p.Files, p.State)
		fmt.Fprintf(&b, "Read: %s\n", orNone(p.Read))
		fmt.Fprintf(&b, "Unknown: %s\n\n", orNone(p.Unknown))
		if p.Summary != "" {
			fmt.Fprintf(&b, "%s\n\n", quoteCut(p.Summary, 16<<10))
		}
	}
	return b.String()
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, ", ")
}

func quoteCut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "… (cut)"
	}
	return s
}

// exploreMovedTx tells a partition's move on the task's stream.
func (s *Store) exploreMovedTx(tx *gorm.DB, task, actor string, p domain.ExplorePart) error {
	extra, _ := json.Marshal(exploreMove{Task: task, Part: p.Part, State: p.State, Worker: p.Worker, Coverage: p.Coverage, Unknown: p.Unknown})
	subject := fmt.Sprintf("%s: part %d %s (%s)", task, p.Part, p.State, p.Worker)
	body := fmt.Sprintf("Part %d (%s) is %s with %s.", p.Part, strings.Join(p.Areas, ", "), p.State, p.Worker)
	if p.State != domain.ExploreOpen {
		body = fmt.Sprintf("Part %d is %s by %s: read %s; unknown %s.", p.Part, p.State, p.Worker, orNone(p.Read), orNone(p.Unknown))
	}
	_, err := s.appendTx(tx, domain.Event{StreamID: domain.TaskStream(task), Source: actor, Message: domain.Message{
		From: "helix-org", Subject: subject, Body: body, BodyContentType: "text/plain", Extra: extra}}, AppendOptions{})
	return err
}

// endedExploreTx settles the partitions a finished run was handed and did
// not report: every area of them unknown, so the planner is never kept
// waiting for a report that will not come.
func (s *Store) endedExploreTx(tx *gorm.DB, a domain.Activation, seqs []int64) error {
	var rows []exploreRow
	if err := tx.Where("handout_seq IN ? AND state = ? AND worker = ?", seqs, string(domain.ExploreOpen), a.WorkerID).Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		row, err := lockTask(tx, r.TaskID)
		if err != nil {
			return err
		}
		if row.State != string(domain.TaskExploration) {
			continue
		}
		p := r.toDomain()
		p.State, p.Read, p.Unknown, p.Coverage = domain.ExploreUnreported, nil, p.Areas, 0
		p.Summary = strings.TrimSpace(fmt.Sprintf("run %s ended without a report: %s %s", a.ID, a.Status, a.Error))
		if err := s.settlePartTx(tx, row, "", r, p); err != nil {
			return err
		}
	}
	return nil
}
