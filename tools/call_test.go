package tools

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestCallAudit: each call through Call leaves one audit record saying
// how it ended — ok, error, refused, pending approval — and an approved
// call's run leaves one more, naming the approval it ran under.
func TestCallAudit(t *testing.T) {
	f := newFixture(t)
	a := withHeld(t, f, nil) // w-desk's dismiss_worker of w-sub, held for w-lead
	ctx := t.Context()
	owner, err := f.env.Store.LiveTools(ctx, store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	Invoke(ctx, f.env, owner, "get_role", json.RawMessage(`{"id":"r-support"}`))
	Invoke(ctx, f.env, owner, "get_role", json.RawMessage(`{"id":"r-none"}`))
	Invoke(ctx, f.env, owner, "get_role", json.RawMessage(`{"id":"r-support","colour":"red"}`))
	Invoke(ctx, f.as("w-maya"), nil, "list_roles", nil)
	Invoke(ctx, f.env, owner, "no_such_tool", nil)
	must(t)(f.env.Store.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-lead", Tool: "decide_approval"}))
	lead, err := f.env.Store.LiveTools(ctx, "w-lead")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Invoke(ctx, f.as("w-lead"), lead, "decide_approval", json.RawMessage(`{"id":"`+a.ID+`","decision":"approve"}`)); err != nil {
		t.Fatal(err)
	}
	if err := f.env.Store.FlushCalls(ctx); err != nil {
		t.Fatal(err)
	}
	calls, err := f.env.Store.ListCalls(ctx, store.CallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(calls) - 1; i >= 0; i-- {
		c := calls[i]
		got = append(got, c.Worker+" "+c.Tool+" "+string(c.Status)+" "+c.Approval+" "+c.Error)
	}
	want := []string{
		"w-desk dismiss_worker pending approval " + a.ID + " ",
		"w-owner get_role ok  ",
		`w-owner get_role error  role "r-none": not found`,
		`w-owner get_role error  colour: unknown argument (valid: "id")`,
		`w-maya list_roles refused  missing grant: worker w-maya does not hold grant "list_roles"; a worker with grant_tool can grant it`,
		`w-owner no_such_tool refused  name: unknown tool "no_such_tool"`,
		"w-desk dismiss_worker ok " + a.ID + " ",
		"w-lead decide_approval ok  ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audited calls (-want +got):\n%s", diff)
	}
}
