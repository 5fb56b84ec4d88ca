package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestTaskStateNext(t *testing.T) {
	tests := []struct {
		from    domain.TaskState
		act     domain.TaskAction
		want    domain.TaskState
		wantErr string
	}{
		{domain.TaskBacklog, domain.ActStart, domain.TaskSpecGeneration, ""},
		{domain.TaskSpecGeneration, domain.ActSubmitSpec, domain.TaskSpecReview, ""},
		{domain.TaskSpecReview, domain.ActRequestChanges, domain.TaskSpecRevision, ""},
		{domain.TaskSpecRevision, domain.ActSubmitSpec, domain.TaskSpecReview, ""},
		{domain.TaskSpecReview, domain.ActApprove, domain.TaskSpecApproved, ""},
		{domain.TaskSpecApproved, domain.ActQueue, domain.TaskImplementationQueued, ""},
		{domain.TaskImplementationQueued, domain.ActImplement, domain.TaskImplementation, ""},
		{domain.TaskImplementation, domain.ActFinish, domain.TaskImplementationReview, ""},
		{domain.TaskImplementationReview, domain.ActApprove, domain.TaskDone, ""},
		{domain.TaskImplementation, domain.ActBlock, domain.TaskBlocked, ""},
		{domain.TaskBlocked, domain.ActResume, domain.TaskImplementation, ""},
		{domain.TaskSpecReview, domain.ActCancel, domain.TaskCancelled, ""},
		{domain.TaskBlocked, domain.ActCancel, domain.TaskCancelled, ""},
		{domain.TaskSpecReview, domain.ActSubmitSpec, "",
			`a task in state "spec_review" does not allow "submit_spec" (allowed: "approve", "request_changes", "block", "cancel")`},
		{domain.TaskBacklog, domain.ActApprove, "", `state "backlog" does not allow "approve" (allowed: "start", "explore", "block", "cancel")`},
		{domain.TaskBlocked, domain.ActBlock, "", `(allowed: "resume", "cancel")`},
		{domain.TaskDone, domain.ActCancel, "", `a task in state "done" does not allow "cancel" (allowed: none, the task is finished)`},
		{domain.TaskCancelled, domain.ActStart, "", `(allowed: none, the task is finished)`},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"/"+string(tt.act), func(t *testing.T) {
			got, err := tt.from.Next(tt.act)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrConflict) {
					t.Fatalf("Next = %v, %v; want conflict containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Next = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestEveryStateIsReachable walks the machine from backlog: a state no
// action leads to would be a dead entry in the enum.
func TestEveryStateIsReachable(t *testing.T) {
	seen := map[domain.TaskState]bool{domain.TaskBacklog: true}
	queue := []domain.TaskState{domain.TaskBacklog}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range s.Allowed() {
			next, err := s.Next(a)
			if err != nil {
				t.Fatalf("%s allows %s but Next fails: %v", s, a, err)
			}
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	for _, s := range domain.TaskStates {
		if !seen[s] {
			t.Errorf("state %s is unreachable", s)
		}
	}
}

func TestSpecTaskValidate(t *testing.T) {
	ok := domain.SpecTask{Title: "Login", Prompt: "Add login", Planner: "w-plan", Builders: []string{"w-b1"}}
	tests := []struct {
		name    string
		edit    func(*domain.SpecTask)
		wantErr string
	}{
		{"valid", func(*domain.SpecTask) {}, ""},
		{"bad id", func(s *domain.SpecTask) { s.ID = "login" }, `id: id "login" must start with "t-"`},
		{"no title", func(s *domain.SpecTask) { s.Title = " " }, "title: is required"},
		{"no prompt", func(s *domain.SpecTask) { s.Prompt = "" }, "prompt: is required"},
		{"no planner", func(s *domain.SpecTask) { s.Planner = "" }, "planner: is required"},
		{"no builders", func(s *domain.SpecTask) { s.Builders = nil }, "builders: is required"},
		{"negative parallel", func(s *domain.SpecTask) { s.Parallel = -1 }, "parallel: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := ok
			tt.edit(&task)
			err := task.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("Validate = %v, want invalid containing %q", err, tt.wantErr)
			}
		})
	}
}

func item(seq int, state domain.ItemState, blockedBy ...int) domain.TaskItem {
	return domain.TaskItem{Seq: seq, Title: "item", State: state, BlockedBy: blockedBy}
}

func TestCheckItems(t *testing.T) {
	tests := []struct {
		name    string
		items   []domain.TaskItem
		wantErr string
	}{
		{"empty", nil, ""},
		{"diamond", []domain.TaskItem{item(1, ""), item(2, "", 1), item(3, "", 1), item(4, "", 2, 3)}, ""},
		{"two-cycle", []domain.TaskItem{item(1, "", 2), item(2, "", 1)}, "items form a cycle: 1 → 2 → 1"},
		{"three-cycle behind a root", []domain.TaskItem{item(1, ""), item(2, "", 1, 4), item(3, "", 2), item(4, "", 3)},
			"items form a cycle: 2 → 4 → 3 → 2"},
		{"self", []domain.TaskItem{item(1, "", 1)}, "items form a cycle: 1 → 1"},
		{"unknown blocker", []domain.TaskItem{item(1, "", 9)}, "items[0].blockedBy: item 1 is blocked by item 9, which does not exist"},
		{"duplicate", []domain.TaskItem{item(1, ""), item(1, "")}, "items[1].seq: item 1 appears twice"},
		{"zero seq", []domain.TaskItem{item(0, "")}, "items[0].seq: must be 1 or more"},
		{"no title", []domain.TaskItem{{Seq: 1}}, "items[0].title: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.CheckItems(tt.items)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("CheckItems = %v, want invalid containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestReadyItems(t *testing.T) {
	seqs := func(items []domain.TaskItem) []int {
		var out []int
		for _, it := range items {
			out = append(out, it.Seq)
		}
		return out
	}
	tests := []struct {
		name  string
		items []domain.TaskItem
		want  []int
	}{
		{"roots first", []domain.TaskItem{item(3, domain.ItemPending, 1), item(1, domain.ItemPending), item(2, domain.ItemPending)}, []int{1, 2}},
		{"after blockers done", []domain.TaskItem{item(1, domain.ItemDone), item(2, domain.ItemInProgress), item(3, domain.ItemPending, 1), item(4, domain.ItemPending, 1, 2)}, []int{3}},
		{"blocked blocks", []domain.TaskItem{item(1, domain.ItemBlocked), item(2, domain.ItemPending, 1)}, nil},
		{"all done", []domain.TaskItem{item(1, domain.ItemDone)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, seqs(domain.ReadyItems(tt.items))); diff != "" {
				t.Errorf("ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChecklistRoundTrip(t *testing.T) {
	items := []domain.TaskItem{
		{Seq: 1, Title: "Schema", State: domain.ItemDone, Summary: "users table", Files: []string{"db.go"}},
		{Seq: 2, Title: "Handler", State: domain.ItemInProgress, Worker: "w-b1", Description: "POST /login\nreturns a cookie"},
		{Seq: 3, Title: "Page", State: domain.ItemPending, BlockedBy: []int{1, 2}, Verify: "go test ./..."},
		{Seq: 4, Title: "Docs (later)", State: domain.ItemBlocked},
	}
	md := domain.RenderChecklist("Login", items)
	want := `# Progress: Login

- [x] 1. Schema
  files: db.go
  result: users table
- [~] 2. Handler @w-b1
  POST /login
  returns a cookie
- [ ] 3. Page (after 1, 2)
  verify: go test ./...
- [!] 4. Docs (later)
`
	if diff := cmp.Diff(want, md); diff != "" {
		t.Fatalf("render (-want +got):\n%s", diff)
	}
	lines, err := domain.ParseChecklist(md)
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []domain.ChecklistLine{{1, domain.ItemDone, "Schema"}, {2, domain.ItemInProgress, "Handler"},
		{3, domain.ItemPending, "Page"}, {4, domain.ItemBlocked, "Docs (later)"}}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func TestParseChecklistErrors(t *testing.T) {
	tests := []struct{ md, wantErr string }{
		{"- [?] 1. what", `line 1 "- [?] 1. what" is not`},
		{"# P\n\n- [x] one", `line 3 "- [x] one" is not "- [ ] N. title"`},
	}
	for _, tt := range tests {
		_, err := domain.ParseChecklist(tt.md)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ParseChecklist(%q) = %v, want %q", tt.md, err, tt.wantErr)
		}
	}
}

func TestApplyChecklist(t *testing.T) {
	items := []domain.TaskItem{item(1, domain.ItemInProgress), item(2, domain.ItemPending), item(3, domain.ItemDone), item(4, domain.ItemPending)}
	lines := []domain.ChecklistLine{
		{Seq: 1, State: domain.ItemDone},       // an agent ticks its item: taken
		{Seq: 2, State: domain.ItemInProgress}, // only the server hands out: ignored
		{Seq: 3, State: domain.ItemPending},    // done never goes back: ignored
		{Seq: 4, State: domain.ItemBlocked},    // blocked: taken
		{Seq: 9, State: domain.ItemDone},       // unknown: ignored
	}
	want := []domain.TaskItem{item(1, domain.ItemDone), item(4, domain.ItemBlocked)}
	if diff := cmp.Diff(want, domain.ApplyChecklist(items, lines)); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
}

func TestFleet(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	items := []domain.TaskItem{item(1, domain.ItemDone), item(2, domain.ItemInProgress), item(3, domain.ItemPending)}
	items[1].Worker, items[1].StartedAt, items[1].Title = "w-b1", &start, "Handler"
	got := domain.Fleet(items, start.Add(90*time.Second))
	want := []domain.FleetEntry{{Worker: "w-b1", Item: 2, Title: "Handler", Before: 1, After: 3, Elapsed: "1m30s"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fleet (-want +got):\n%s", diff)
	}
	if n, total := domain.Progress(items); n != 1 || total != 3 {
		t.Errorf("progress = %d/%d, want 1/3", n, total)
	}
}
