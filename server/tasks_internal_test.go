package server

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestTaskResultRereadsAnEndedTask: tasks/result reads the task, then
// looks for its running call. When the call ends between the two, the
// answer is the task's end, not an error about a task still working —
// the race CI met in TestTaskCallsAreGated.
func TestTaskResultRereadsAnEndedTask(t *testing.T) {
	st := storetest.New(t)
	s := New(st, Config{})
	ctx := t.Context()
	task, err := st.CreateTask(ctx, "w-a", "publish", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stale := task // as tasks/result read it, while the call was running
	if _, err := st.EndTask(ctx, task.ID, store.TaskCompleted, "", []byte(`{"result":{"content":[],"structuredContent":{"pending":true}}}`)); err != nil {
		t.Fatal(err)
	}

	w := httptest.NewRecorder()
	s.taskResult(w, httptest.NewRequestWithContext(ctx, "POST", "/", nil), rpcRequest{ID: json.RawMessage(`7`), Method: "tasks/result"}, stale)
	if got := w.Body.String(); !strings.Contains(got, `"structuredContent":{"pending":true}`) || strings.Contains(got, `"error"`) {
		t.Errorf("tasks/result of a task that ended after it was read = %s, want its answer", got)
	}
}
