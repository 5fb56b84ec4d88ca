package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestTasks: a task ends once (a cancel before the call's end wins), is
// seen only by its worker, and a restart fails the ones still working.
func TestTasks(t *testing.T) {
	st := storetest.New(t)
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
