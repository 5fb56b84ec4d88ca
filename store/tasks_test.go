package store_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestTasks: a task ends once (a cancel before the call's end wins), is
// seen only by its worker, and a restart fails the ones still working.
func TestTasks(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	mk := func() store.Task {
		task, err := st.CreateTask(ctx, "w-a", "create_skill", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	cancelled, done, cut := mk(), mk(), mk()
	steps := []struct {
		name, id, status, wantStatus string
	}{
		{"cancel first", cancelled.ID, store.TaskCancelled, store.TaskCancelled},
		{"the call's end after a cancel is dropped", cancelled.ID, store.TaskCompleted, store.TaskCancelled},
		{"a call ends", done.ID, store.TaskCompleted, store.TaskCompleted},
	}
	for _, s := range steps {
		got, err := st.EndTask(ctx, s.id, s.status, "", []byte(`{"result":{}}`))
		if err != nil || got.Status != s.wantStatus {
			t.Errorf("%s: %s, %v; want %s", s.name, got.Status, err, s.wantStatus)
		}
	}
	if _, err := st.GetTask(ctx, "w-b", done.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another worker's task: %v, want not found", err)
	}
	clock.Advance(store.TaskLease + time.Second) // on PostgreSQL only a lapsed lease is interrupted
	if n, err := st.FailInterruptedTasks(ctx); err != nil || n != 1 {
		t.Fatalf("failed %d interrupted tasks (%v), want 1", n, err)
	}
	if got, err := st.GetTask(ctx, "w-a", cut.ID); err != nil || got.Status != store.TaskFailed || got.Message == "" {
		t.Errorf("the interrupted task: %+v, %v; want failed with why", got, err)
	}
	if got, _ := st.GetTask(ctx, "w-a", done.ID); got.Status != store.TaskCompleted || string(got.Result) != `{"result":{}}` {
		t.Errorf("an ended task changed: %+v", got)
	}
	if list, err := st.ListTasks(ctx, "w-a"); err != nil || len(list) != 3 {
		t.Errorf("ListTasks = %d tasks, %v; want 3", len(list), err)
	}
}

// TestTasksOnASharedDatabase: a server starting on a database of its own
// fails every working task; on a shared one (PostgreSQL) only those whose
// lease lapsed, since the others' calls run on other servers. A working
// task whose lease lapses later is failed when it is read, and a lease of
// an ended task is not renewed, so its server stops the call.
func TestTasksOnASharedDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		db         func(t testing.TB) string
		wantFailed []string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "org.db") }, []string{"live", "lapsed"}},
		{"postgres", storetest.PostgresURL, []string{"lapsed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st, err := store.Open(t.Context(), tc.db(t), store.Options{KeyFile: filepath.Join(t.TempDir(), "key"), Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			ctx := t.Context()
			tasks := map[string]store.Task{}
			for _, name := range []string{"live", "lapsed"} {
				if tasks[name], err = st.CreateTask(ctx, "w-a", "create_skill", time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(store.TaskLease * 2 / 3)
			if ok, err := st.RenewTaskLease(ctx, tasks["live"].ID); err != nil || !ok {
				t.Fatalf("renew a working task's lease = %v, %v", ok, err)
			}
			clock.Advance(store.TaskLease / 2) // past the first lease, within the renewed one

			n, err := st.FailInterruptedTasks(ctx)
			if err != nil || int(n) != len(tc.wantFailed) {
				t.Errorf("a start failed %d tasks (%v), want %v", n, err, tc.wantFailed)
			}
			for _, name := range []string{"live", "lapsed"} {
				got, err := st.GetTask(ctx, "w-a", tasks[name].ID)
				want := store.TaskWorking
				if slices.Contains(tc.wantFailed, name) {
					want = store.TaskFailed
				}
				if err != nil || got.Status != want {
					t.Errorf("%s task is %s (%v), want %s", name, got.Status, err, want)
				}
			}
			if tc.name == "postgres" {
				clock.Advance(store.TaskLease) // its server stopped renewing
				list, err := st.ListTasks(ctx, "w-a")
				if err != nil || len(list) != 2 {
					t.Fatalf("ListTasks = %+v, %v", list, err)
				}
				for _, got := range list {
					if got.Status != store.TaskFailed {
						t.Errorf("tasks/list shows %s as %s after its lease lapsed, want failed", got.ID, got.Status)
					}
				}
				if got, err := st.GetTask(ctx, "w-a", tasks["live"].ID); err != nil || got.Status != store.TaskFailed || !strings.Contains(got.Message, "stopped") {
					t.Errorf("a working task whose lease lapsed reads as %s %q (%v), want failed saying why", got.Status, got.Message, err)
				}
			}
			if ok, err := st.RenewTaskLease(ctx, tasks["live"].ID); err != nil || ok {
				t.Errorf("renew an ended task's lease = %v, %v; want false", ok, err)
			}
		})
	}
}
