package tools

import (
	"testing"

	"github.com/helixml/helix-org/domain"
)

func TestSkipItem(t *testing.T) {
	blocked := func(t *testing.T, f fixture) {
		withApproved(t, f)
		report(t, f, "w-b1", 1, "blocked", "no database to test against")
	}
	args := func(item int, reason string) map[string]any {
		return map[string]any{"task": "t-login", "item": item, "reason": reason}
	}
	runTable(t, "skip_item", []toolCase[itemOut]{
		{name: "the planner skips a blocked item", setup: blocked, caller: "w-echo", args: args(1, "users come from SSO"),
			want: itemOut{Seq: 1, State: "skipped", Worker: "w-b1"},
			check: func(t *testing.T, f fixture, _ itemOut) {
				if got := stallSteps(t, f, "t-login"); len(got) != 1 || got[0] != "t-login: item 1 skip" {
					t.Errorf("stall events %q", got)
				}
				if it := items(t, f, "t-login")[2]; it.State != "in_progress" {
					t.Errorf("item 3, after item 1, is %+v", it)
				}
			}},
		{name: "the reviewer may too", setup: blocked, args: args(1, "not needed"), want: itemOut{Seq: 1, State: "skipped", Worker: "w-b1"}},
		{name: "a builder may not", setup: blocked, caller: "w-b2", args: args(1, "x"),
			wantErr: []string{"only the planner w-echo or the reviewer w-owner"}, wantIs: domain.ErrForbidden},
		{name: "an item in progress", setup: withApproved, caller: "w-echo", args: args(1, "x"),
			wantErr: []string{"item t-login/1 is in_progress; only a blocked or pending item is skipped"}, wantIs: domain.ErrConflict},
		{name: "no reason", setup: blocked, caller: "w-echo", args: args(1, ""), wantErr: []string{"reason"}, wantIs: domain.ErrInvalid},
		{name: "no such item", setup: blocked, caller: "w-echo", args: args(9, "x"), wantIs: domain.ErrNotFound},
		{name: "before implementation", setup: withSubmitted, caller: "w-echo", args: args(1, "x"),
			wantErr: []string{`state "spec_review"`}, wantIs: domain.ErrConflict},
	})
}
