package tools

import (
	"testing"
)

func TestListSpecTasks(t *testing.T) {
	type row struct {
		ID    string `json:"id"`
		State string `json:"state"`
		Done  int    `json:"done"`
		Items int    `json:"items"`
	}
	type out struct {
		Tasks []row `json:"tasks"`
	}
	runTable(t, "list_spec_tasks", []toolCase[out]{
		{name: "none", want: out{Tasks: []row{}}},
		{
			name: "each task with its items done",
			setup: func(t *testing.T, f fixture) {
				withApproved(t, f)
				report(t, f, "w-b1", 1, "delivered", "table")
			},
			want: out{Tasks: []row{{ID: "t-login", State: "implementation", Done: 1, Items: 4}}},
		},
	})
}
