package tools

import (
	"testing"
)

func TestFindTools(t *testing.T) {
	type found struct {
		Name string `json:"name"`
	}
	type out struct {
		Tools []found `json:"tools"`
	}
	// The owner's catalog past a threshold of 5: every built-in tool is
	// found, none listed but the core.
	searching := func(t *testing.T, f fixture) {
		f.env.Catalog = NewCatalog(Limits{Threshold: 5}, Builtins(testTransports, Names()))
	}
	runTable(t, "find_tools", []toolCase[out]{
		{name: "a word of its description", setup: searching, args: map[string]any{"query": "a seat for someone", "limit": 1},
			want: out{Tools: []found{{"create_position"}}}},
		{name: "words of its name", setup: searching, args: map[string]any{"query": "hire someone", "limit": 1},
			want: out{Tools: []found{{"hire_worker"}}}},
		{name: "a plural finds the singular", setup: searching, args: map[string]any{"query": "approvals", "limit": 2},
			want: out{Tools: []found{{"list_approvals"}, {"decide_approval"}}}},
		{name: "a tool's name finds it first", setup: searching, args: map[string]any{"query": "revoke_tool", "limit": 1},
			want: out{Tools: []found{{"revoke_tool"}}}},
		{name: "five by default, best first", setup: searching, args: map[string]any{"query": "worker"},
			want: out{Tools: []found{{"list_workers"}, {"get_worker"}, {"invite_workers"}, {"dismiss_worker"}, {"hire_worker"}}}},
		{name: "nothing matches", setup: searching, args: map[string]any{"query": "xylophone"}, want: out{Tools: []found{}}},
		{name: "no words", setup: searching, args: map[string]any{"query": "the a"}, wantErr: []string{"query: has no words to search for"}},
		{name: "a limit over 20", setup: searching, args: map[string]any{"query": "worker", "limit": 21}, wantErr: []string{"limit: must be between 1 and 20; got 21"}},
		{name: "every tool listed already", args: map[string]any{"query": "worker"}, wantErr: []string{"every tool you hold is in tools/list already"}},
	})
}
