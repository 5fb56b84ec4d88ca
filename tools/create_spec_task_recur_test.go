package tools

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/schedule"
	"github.com/helixml/helix-org/transports/transport"
)

// TestRecurringSpecTask: with a schedule, create_spec_task starts no task
// but a clock; each tick starts one from the same prompt, and a tick while
// the last is open starts none and says so on its stream — across a
// restart, for the clock and the last task are stored. The clock is
// driven, never waited for.
func TestRecurringSpecTask(t *testing.T) {
	ctx := t.Context()
	clock := storetest.NewClock(time.Date(2026, 3, 2, 8, 59, 0, 0, time.UTC))
	db, key := storetest.DB(t), filepath.Join(t.TempDir(), "helix-org.key")
	open := func() *store.Store {
		st, err := store.Open(ctx, db, store.Options{Now: clock.Now, Transports: transport.List{schedule.Transport}.Specs(), KeyFile: key, NoListen: true})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	must(t)(st.Bootstrap(ctx, Names()))
	must(t)(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-dev", Title: "Dev", Content: "Build."}))
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-dev", RoleID: "r-dev", Title: "Dev"}))
	for _, w := range []string{"w-plan", "w-b1"} {
		must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-dev", Name: w}, nil))
	}
	args := func(extra map[string]any) map[string]any {
		a := map[string]any{"title": "Dependency bumps", "prompt": "Bump the dependencies that have new releases.", "planner": "w-plan", "builders": []string{"w-b1"}}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	owner := &Env{Store: st, Caller: store.OwnerWorker, Known: Names()}
	for _, bad := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"a cron that is not one", args(map[string]any{"schedule": "every monday"}), "transport.config.cron"},
		{"an unknown zone", args(map[string]any{"schedule": "0 9 * * *", "timezone": "Mars/Olympus"}), "timezone"},
		{"an id with a schedule", args(map[string]any{"schedule": "0 9 * * *", "id": "t-bumps"}), "id"},
		{"a zone without a schedule", args(map[string]any{"timezone": "Europe/London"}), "timezone"},
		{"a planner who is not there", args(map[string]any{"schedule": "0 9 * * *", "planner": "w-gone"}), "w-gone"},
	} {
		if _, err := call[createSpecTaskOut](t, owner, "create_spec_task", bad.args); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want one naming %q", bad.name, err, bad.want)
		}
	}
	out := mustCall[createSpecTaskOut](t, owner, "create_spec_task", args(map[string]any{"schedule": "0 9 * * *"}))
	if out.Task != "" || out.Recurring == nil || out.Recurring.Stream != "s-every-dependency-bumps" || out.Recurring.Cron != "0 9 * * *" {
		t.Fatalf("create_spec_task = %+v, want a schedule and no task yet", out)
	}
	tasks := func(st *store.Store) []store.SpecTaskSummary {
		t.Helper()
		got, err := st.ListSpecTasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// step is one pass of a fresh ticker at the clock's time.
	step := func(st *store.Store) {
		t.Helper()
		if _, err := (&schedule.Ticker{Store: st, Now: clock.Now}).Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step(st)
	if got := tasks(st); len(got) != 0 {
		t.Fatalf("before 09:00: %+v", got)
	}
	clock.Advance(time.Minute)
	step(st)
	step(st)
	first := tasks(st)
	if len(first) != 1 || first[0].ID != "t-dependency-bumps" || first[0].State.Final() {
		t.Fatalf("at 09:00: %+v, want one open task", first)
	}

	// A restart; the next day's tick comes while the first task is open.
	st.Close()
	st = open()
	t.Cleanup(func() { st.Close() })
	clock.Advance(24 * time.Hour)
	step(st)
	if got := tasks(st); len(got) != 1 {
		t.Fatalf("a tick while the last task is open started one: %+v", got)
	}
	evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.TaskStream(first[0].ID)}})
	if err != nil {
		t.Fatal(err)
	}
	var skip store.RecurringTick
	last := evs[len(evs)-1]
	if json.Unmarshal(last.Message.Extra, &skip) != nil || !skip.Skipped || skip.Running != first[0].ID || skip.Recurrence != out.Recurring.Stream ||
		!strings.HasPrefix(last.Message.Subject, "Tick skipped: t-dependency-bumps is still") {
		t.Errorf("the task's stream ends with %q %s, want the skipped tick told", last.Message.Subject, last.Message.Extra)
	}

	// Once it is cancelled, the next tick starts the next task, once.
	if _, err := st.CancelSpecTask(ctx, store.OwnerWorker, first[0].ID, "superseded"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	step(st)
	step(st)
	got := tasks(st)
	ids := make([]string, len(got))
	for i, s := range got {
		ids[i] = s.ID
	}
	if len(got) != 2 || !strings.Contains(strings.Join(ids, " "), "t-dependency-bumps-2") {
		t.Fatalf("after the cancel, the next tick: %v, want a second task", ids)
	}
	view, err := st.GetSpecTask(ctx, "t-dependency-bumps-2")
	if err != nil || view.Task.Prompt != "Bump the dependencies that have new releases." || view.Task.Planner != "w-plan" || view.Task.CreatedBy != store.OwnerWorker {
		t.Errorf("the second task = %+v, %v; want the same prompt, planner and creator", view.Task, err)
	}

	// A tick that cannot start its task (the builder is gone) keeps the
	// tick, starts nothing, and tells the creator.
	if _, err := st.CancelSpecTask(ctx, store.OwnerWorker, "t-dependency-bumps-2", ""); err != nil {
		t.Fatal(err)
	}
	must(t)(st.DismissWorker(ctx, store.OwnerWorker, "w-b1"))
	clock.Advance(24 * time.Hour)
	step(st)
	if got := tasks(st); len(got) != 2 {
		t.Errorf("a tick with its builder gone started a task: %+v", got)
	}
	ticks, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{out.Recurring.Stream}})
	if err != nil || len(ticks) != 4 {
		t.Fatalf("ticks: %d, %v; want all 4 kept", len(ticks), err)
	}
	inbox, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.InboxStream(store.OwnerWorker)}})
	if err != nil || len(inbox) == 0 {
		t.Fatalf("the owner's inbox: %d, %v", len(inbox), err)
	}
	if body := inbox[len(inbox)-1].Message.Body; !strings.Contains(body, "could not start spec task \"Dependency bumps\"") || !strings.Contains(body, "w-b1") {
		t.Errorf("the owner's inbox ends %q, want the tick's failure told", body)
	}

	// Stopped, it starts nothing more, and tells nobody.
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-b2", Kind: domain.WorkerAI, PositionID: "p-dev", Name: "w-b2"}, nil))
	if _, err := call[specStateOut](t, &Env{Store: st, Caller: "w-b2", Known: Names()}, "cancel_spec_task", map[string]any{"task": out.Recurring.Stream}); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("a builder stopping it: %v, want forbidden", err)
	}
	mustCall[specStateOut](t, &Env{Store: st, Caller: store.OwnerWorker, Known: Names()}, "cancel_spec_task", map[string]any{"task": out.Recurring.Stream, "reason": "done with bumps"})
	clock.Advance(24 * time.Hour)
	step(st)
	if got := tasks(st); len(got) != 2 {
		t.Errorf("a stopped recurrence started a task: %+v", got)
	}
	if again, _ := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.InboxStream(store.OwnerWorker)}}); len(again) != len(inbox) {
		t.Errorf("a stopped recurrence's tick told the owner: %+v", again[len(again)-1].Message)
	}
}
