package tools

import (
	"testing"
)

type workerSummary struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	PositionID string `json:"positionId"`
}

func TestListWorkers(t *testing.T) {
	type out struct {
		Workers []workerSummary `json:"workers"`
	}
	var (
		echo  = workerSummary{ID: "w-echo", Kind: "ai", PositionID: "p-support"}
		maya  = workerSummary{ID: "w-maya", Kind: "human", PositionID: "p-support"}
		owner = workerSummary{ID: "w-owner", Kind: "human", PositionID: "p-owner"}
	)
	dismissMaya := func(t *testing.T, f fixture) {
		mustCall[any](t, f.env, "dismiss_worker", map[string]any{"id": "w-maya"})
	}
	runTable(t, "list_workers", []toolCase[out]{
		{
			name: "every active worker by id",
			want: out{Workers: []workerSummary{echo, maya, owner}},
		},
		{
			name:  "dismissed workers are left out by default",
			setup: dismissMaya,
			want:  out{Workers: []workerSummary{echo, owner}},
		},
		{
			name:  "includeDismissed lists them too",
			setup: dismissMaya,
			args:  map[string]any{"includeDismissed": true},
			want:  out{Workers: []workerSummary{echo, maya, owner}},
		},
		{
			name: "only one kind",
			args: map[string]any{"kind": "ai"},
			want: out{Workers: []workerSummary{echo}},
		},
		{
			name: "only one position",
			args: map[string]any{"position": "p-owner"},
			want: out{Workers: []workerSummary{owner}},
		},
		{
			name: "no match gives an empty list",
			args: map[string]any{"position": "p-nope"},
			want: out{Workers: []workerSummary{}},
		},
		{
			name:    "unknown kind lists the valid kinds",
			args:    map[string]any{"kind": "robot"},
			wantErr: []string{`kind: unknown worker kind "robot" (valid: "human", "ai")`},
		},
	})
}
