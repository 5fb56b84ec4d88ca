package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// taskClient speaks 2025-11-25 to one worker's endpoint over raw HTTP, each
// answer decoded strictly.
type taskClient struct {
	t          *testing.T
	url, token string
	id         int
}

func (c *taskClient) rpc(method string, params any) message {
	c.t.Helper()
	c.id++
	p, _ := json.Marshal(params)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": json.RawMessage(p)})
	x := post(c.t, c.url, c.token, string(body), map[string]string{"MCP-Protocol-Version": v20251125})
	req, _ := decodeMessage(body)
	if err := checkAnswer(v20251125, req, x); err != nil {
		c.t.Errorf("%s: %v", method, err)
	}
	resp, err := decodeMessage(x.respBody)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// task decodes a result holding a Task (tasks/get, tasks/cancel) or one
// under "task" (a task-augmented tools/call).
func task(t *testing.T, m message) (id, status, note string) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error %d %s", m.Error.Code, m.Error.Message)
	}
	var r struct {
		Task                          *struct{ TaskID, Status, StatusMessage string }
		TaskID, Status, StatusMessage string
	}
	json.Unmarshal(m.Result, &r)
	if r.Task != nil {
		return r.Task.TaskID, r.Task.Status, r.Task.StatusMessage
	}
	return r.TaskID, r.Status, r.StatusMessage
}

// TestTasks: a 2025-11-25 client that asks for a task gets one at once,
// and its answer from tasks/result; it can list, poll and cancel its
// tasks, and no other worker sees them. The server declares tasks in
// initialize and marks the long tools in tools/list.
func TestTasks(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	c := &taskClient{t: t, url: h.URL(store.OwnerWorker), token: h.OwnerToken}

	init := c.rpc("initialize", map[string]any{"protocolVersion": v20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tasks", "version": "1"}})
	if !strings.Contains(string(init.Result), `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize does not declare tasks: %s", init.Result)
	}
	var list struct {
		Tools []struct {
			Name      string
			Execution map[string]string
		}
	}
	// Every tool, create_skill among them: tool search off.
	x := post(t, c.url, c.token, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": v20251125, domain.ToolSearchHeader: "off"})
	answer, err := decodeMessage(x.respBody)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(answer.Result, &list); err != nil {
		t.Fatal(err)
	}
	marked := false
	for _, tool := range list.Tools {
		marked = marked || tool.Name == "create_skill" && tool.Execution["taskSupport"] == "optional"
	}
	if !marked {
		t.Errorf("create_skill is not marked for tasks: %+v", list.Tools)
	}

	id, status, _ := task(t, c.rpc("tools/call", map[string]any{"name": "get_worker", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}}))
	if status != "working" || !strings.HasPrefix(id, "task-") {
		t.Fatalf("task-augmented call = %s %s, want a working task", id, status)
	}
	res := c.rpc("tasks/result", map[string]any{"taskId": id})
	if !strings.Contains(string(res.Result), `"structuredContent":{"position"`) || !strings.Contains(string(res.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result = %s", res.Result)
	}
	if _, status, _ := task(t, c.rpc("tasks/get", map[string]any{"taskId": id})); status != "completed" {
		t.Errorf("after its result the task is %s", status)
	}
	if l := c.rpc("tasks/list", nil); !strings.Contains(string(l.Result), id) {
		t.Errorf("tasks/list = %s, lacks %s", l.Result, id)
	}
	if m := c.rpc("tasks/cancel", map[string]any{"taskId": id}); m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "already ended") {
		t.Errorf("cancelling an ended task = %+v", m.Error)
	}

	// A call that waits (read_events on an empty stream) is cancelled.
	servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": "s-inbox"})
	long, _, _ := task(t, c.rpc("tools/call", map[string]any{"name": "read_events", "arguments": map[string]any{"streams": []string{"s-inbox"}, "wait": 60}, "task": map[string]any{}}))
	if _, status, _ := task(t, c.rpc("tasks/cancel", map[string]any{"taskId": long})); status != "cancelled" {
		t.Errorf("tasks/cancel left the task %s", status)
	}
	if m := c.rpc("tasks/result", map[string]any{"taskId": long}); m.Error == nil || !strings.Contains(m.Error.Message, "cancelled") {
		t.Errorf("result of a cancelled task = %s %+v", m.Result, m.Error)
	}

	maya := &taskClient{t: t, url: h.URL("w-maya"), token: servertest.Token(t, h.Store, "w-maya")}
	if m := maya.rpc("tasks/get", map[string]any{"taskId": id}); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("another worker read the owner's task: %s", m.Result)
	}
}

// TestTaskCallsAreGated: a call asked for as a task passes the same
// approval gate as a plain call. Before, a worker whose grant of publish
// required approval could publish at once by asking for a task.
func TestTaskCallsAreGated(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	owner := h.Owner(t)
	seedOrg(t, h, owner)
	servertest.Call[domain.Stream](t, owner, "create_stream", map[string]any{"id": "s-news", "name": "news"})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "approval": "required"})
	maya := &taskClient{t: t, url: h.URL("w-maya"), token: servertest.Token(t, h.Store, "w-maya")}

	id, _, _ := task(t, maya.rpc("tools/call", map[string]any{"name": "publish", "arguments": map[string]any{"stream": "s-news", "body": "now"}, "task": map[string]any{}}))
	res := maya.rpc("tasks/result", map[string]any{"taskId": id})
	if !strings.Contains(string(res.Result), `"pending":true`) || !strings.Contains(string(res.Result), "waits for w-owner to approve it") {
		t.Errorf("task result = %s, want the call held for approval", res.Result)
	}
	if evs, err := h.Store.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-news"}, Limit: 10}); err != nil || len(evs) != 0 {
		t.Errorf("s-news holds %d events (%v), want none before approval", len(evs), err)
	}
	if pending, err := h.Store.ListApprovals(t.Context(), store.OwnerWorker, store.ApprovalFilter{State: domain.ApprovalPending}); err != nil || len(pending) != 1 || pending[0].WorkerID != "w-maya" {
		t.Errorf("pending approvals = %+v (%v), want maya's publish", pending, err)
	}
}

// TestTasksSurviveARestart: a task's state is in the store. One that was
// working when the process stopped is failed, with why, by the next
// server; an ended one keeps its answer.
func TestTasksSurviveARestart(t *testing.T) {
	clock := storetest.NewClock(time.Now())
	h := servertest.StartWith(t, storetest.NewWith(t, store.Options{Transports: servertest.Transports, Now: clock.Now}), server.Config{})
	c := &taskClient{t: t, url: h.URL(store.OwnerWorker), token: h.OwnerToken}
	done, _, _ := task(t, c.rpc("tools/call", map[string]any{"name": "list_roles", "arguments": map[string]any{}, "task": map[string]any{}}))
	c.rpc("tasks/result", map[string]any{"taskId": done})
	// A call the stopped process was running, as it left the store.
	cut, err := h.Store.CreateTask(t.Context(), store.OwnerWorker, "create_skill", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Stopped, the process renews no lease; on PostgreSQL, which several
	// servers may share, a start fails only a task whose lease lapsed.
	clock.Advance(store.TaskLease + time.Second)

	restarted := servertest.StartWith(t, h.Store, server.Config{})
	c2 := &taskClient{t: t, url: restarted.URL(store.OwnerWorker), token: restarted.OwnerToken}
	if _, status, note := task(t, c2.rpc("tasks/get", map[string]any{"taskId": cut.ID})); status != "failed" || !strings.Contains(note, "restarted") {
		t.Errorf("the interrupted task is %s (%q), want failed saying why", status, note)
	}
	if res := c2.rpc("tasks/result", map[string]any{"taskId": done}); !strings.Contains(string(res.Result), `"roles"`) {
		t.Errorf("the ended task's answer after a restart: %s %+v", res.Result, res.Error)
	}
}

// TestTasksExtension: at 2026-07-28 a client that declares the tasks
// extension gets a task for a long tool and its answer from tasks/get; one
// that does not declare it gets the answer at once, as before, and may not
// use the task methods.
func TestTasksExtension(t *testing.T) {
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	m, err := metrics.New(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Config{Metrics: m}) // no Docker: call_skill answers with a tool error
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	url, token := domain.MCPURL(hs.URL, store.OwnerWorker), servertest.Token(t, st, store.OwnerWorker)
	declared := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	call := func(method, name, params, meta string) message {
		t.Helper()
		if params != "" {
			params = "," + params
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + params + `}}`
		x := post(t, url, token, body, map[string]string{"MCP-Protocol-Version": v20260728, "Mcp-Name": name})
		req, _ := decodeMessage([]byte(body))
		if err := checkAnswer(v20260728, req, x); err != nil {
			t.Errorf("%s: %v", method, err)
		}
		m, err := decodeMessage(x.respBody)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	if d := call("server/discover", "", "", declared); !strings.Contains(string(d.Result), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("server/discover does not declare the tasks extension: %s", d.Result)
	}
	created := call("tools/call", "call_skill", `"name":"call_skill","arguments":{"name":"nope"}`, declared)
	var task struct{ TaskID, Status, ResultType string }
	json.Unmarshal(created.Result, &task)
	if task.ResultType != "task" || task.Status != "working" {
		t.Fatalf("call_skill answered %s, want a working task", created.Result)
	}
	srv.WaitTasks()
	got := call("tasks/get", task.TaskID, `"taskId":"`+task.TaskID+`"`, declared)
	if !strings.Contains(string(got.Result), `"status":"completed"`) || !strings.Contains(string(got.Result), `"isError":true`) || !strings.Contains(string(got.Result), "Docker") {
		t.Errorf("tasks/get = %s, want completed with call_skill's tool error", got.Result)
	}
	scrape := httptest.NewRecorder()
	m.Handler().ServeHTTP(scrape, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(scrape.Body.String(), `helix_org_mcp_tool_calls_total{outcome="tool_error",tool="call_skill"} 1`) {
		t.Error("the task's call is not counted in helix_org_mcp_tool_calls_total")
	}
	if c := call("tasks/cancel", task.TaskID, `"taskId":"`+task.TaskID+`"`, declared); string(c.Result) != `{"resultType":"complete"}` {
		t.Errorf("cancelling an ended task = %s %+v, want a bare acknowledgement", c.Result, c.Error)
	}
	if m := call("tasks/get", "task-nope", `"taskId":"task-nope"`, declared); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("an unknown task = %+v", m.Error)
	}

	plain := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if r := call("tools/call", "call_skill", `"name":"call_skill","arguments":{"name":"nope"}`, plain); !strings.Contains(string(r.Result), `"isError":true`) {
		t.Errorf("without the extension call_skill answered %s, want its result at once", r.Result)
	}
	if m := call("tasks/get", task.TaskID, `"taskId":"`+task.TaskID+`"`, plain); m.Error == nil || m.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension = %+v, want -32021", m.Error)
	}
	if r := call("tools/call", "get_worker", `"name":"get_worker","arguments":{}`, declared); !strings.Contains(string(r.Result), `"resultType":"complete"`) {
		t.Errorf("a quick tool became a task: %s", r.Result)
	}
}

// TestTasksAcrossServers: on a database several servers share, a task is
// the org's, not one process's. A server that starts leaves another's
// running task alone; any server answers tasks/result for it, once the
// call on the other ends; and a cancel through any server stops the call
// where it runs.
func TestTasksAcrossServers(t *testing.T) {
	url, key := storetest.PostgresURL(t), filepath.Join(t.TempDir(), "org.key")
	open := func() *store.Store {
		st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Transports: servertest.Transports})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	stA := open()
	if _, err := stA.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	srvA := server.New(stA, server.Config{})
	srvA.RenewTaskLeasesEvery(20 * time.Millisecond)
	a := httptest.NewServer(srvA)
	t.Cleanup(a.Close)
	token := servertest.Token(t, stA, store.OwnerWorker)
	owner := (&servertest.Harness{Store: stA, Server: a, OwnerToken: token}).Owner(t)
	for _, s := range []string{"s-news", "s-quiet"} {
		servertest.Call[any](t, owner, "create_stream", map[string]any{"id": s, "name": s})
		servertest.Call[any](t, owner, "subscribe", map[string]any{"stream": s})
	}
	onA := &taskClient{t: t, url: domain.MCPURL(a.URL, store.OwnerWorker), token: token}
	wait := func(stream string) string {
		id, _, _ := task(t, onA.rpc("tools/call", map[string]any{"name": "read_events", "arguments": map[string]any{"streams": []string{stream}, "wait": 60}, "task": map[string]any{}}))
		return id
	}
	news, quiet := wait("s-news"), wait("s-quiet")

	b := httptest.NewServer(server.New(open(), server.Config{})) // starts while A runs both
	t.Cleanup(b.Close)
	onB := &taskClient{t: t, url: domain.MCPURL(b.URL, store.OwnerWorker), token: token}
	for _, id := range []string{news, quiet} {
		if _, status, note := task(t, onB.rpc("tasks/get", map[string]any{"taskId": id})); status != "working" {
			t.Fatalf("after another server started, A's running task is %s (%q), want working", status, note)
		}
	}

	// The event comes while B waits on tasks/result (the test's goroutine
	// makes the calls; the other only commits).
	published := make(chan error, 1)
	go func() {
		_, err := stA.Append(t.Context(), domain.Event{StreamID: "s-news", Source: store.OwnerWorker, Message: domain.Message{Body: "from A's side"}}, store.AppendOptions{})
		published <- err
	}()
	if res := onB.rpc("tasks/result", map[string]any{"taskId": news}); !strings.Contains(string(res.Result), "from A's side") {
		t.Errorf("tasks/result through B of A's task = %s %+v, want the event A's call read", res.Result, res.Error)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}

	if _, status, _ := task(t, onB.rpc("tasks/cancel", map[string]any{"taskId": quiet})); status != "cancelled" {
		t.Errorf("tasks/cancel through B left the task %s", status)
	}
	stopped := make(chan struct{})
	go func() { srvA.WaitTasks(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second): // the call itself waits 60 s
		t.Error("a cancel through B did not stop the call running on A")
	}
}
