package tools

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestGetSpecTask(t *testing.T) {
	type fleetOut struct {
		Worker  string `json:"worker"`
		Item    int    `json:"item"`
		Before  int    `json:"before"`
		After   int    `json:"after"`
		Elapsed string `json:"elapsed"`
	}
	type task struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	type item struct {
		Seq    int    `json:"seq"`
		State  string `json:"state"`
		Worker string `json:"worker"`
	}
	type out struct {
		Task  task       `json:"task"`
		Items []item     `json:"items"`
		Fleet []fleetOut `json:"fleet"`
		Docs  struct {
			Progress string `json:"progress"`
		} `json:"docs"`
	}
	runTable(t, "get_spec_task", []toolCase[out]{
		{
			name: "who works on what, with the items around it and for how long",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				f.clock.Advance(95 * time.Second)
			},
			args: map[string]any{"task": "t-login"},
			want: out{
				Task:  task{ID: "t-login", State: "implementation"},
				Items: []item{{1, "in_progress", "w-b1"}, {2, "in_progress", "w-b2"}, {3, "pending", ""}, {4, "pending", ""}},
				Fleet: []fleetOut{
					{Worker: "w-b1", Item: 1, After: 2, Elapsed: "1m35s"},
					{Worker: "w-b2", Item: 2, Before: 1, After: 3, Elapsed: "1m35s"},
				},
			},
			check: func(t *testing.T, f fixture, got out) {
				if got.Docs.Progress == "" {
					t.Error("no progress.md in the store's documents")
				}
			},
		},
		{name: "before planning: no items", setup: withSpecTask, args: map[string]any{"task": "t-login"},
			want: out{Task: task{ID: "t-login", State: "spec_generation"}, Items: []item{}}},
		{name: "unknown task", args: map[string]any{"task": "t-nope"}, wantErr: []string{`spec task "t-nope": not found`}, wantIs: domain.ErrNotFound},
	}, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Docs" }, cmp.Ignore()))
}
