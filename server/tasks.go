package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// MCP tasks, in both of their shapes. At 2025-11-25 a client may ask for
// any built-in tools/call as a task (params.task): it gets a task id at
// once, polls tasks/get, fetches the answer with tasks/result, or stops
// the call with tasks/cancel. At 2026-07-28, to a client that declares the
// io.modelcontextprotocol/tasks extension, the server answers the long
// tools' calls (taskTools) with a task, and tasks/get carries the answer.
// The go-sdk has no tasks, so they are served here, in front of it: the
// call runs through tools.Call — the caller's grants, the answer a
// tools/call would give — on a context tasks/cancel ends. Task state is in
// the store, so it outlives a restart; a call a restart cut short is
// failed, visibly. Clients that ask for no task keep synchronous calls.

const (
	// taskTTL is how long a task and its answer are kept by default, and
	// maxTaskTTL the longest a client may ask for.
	taskTTL, maxTaskTTL = time.Hour, 24 * time.Hour
	// taskPoll is the interval suggested to pollers, in milliseconds.
	taskPoll = 1000
	// relatedTask is the _meta key tying a result to its task.
	relatedTask = "io.modelcontextprotocol/related-task"
)

// tasksExtension names the 2026-07-28 tasks extension.
const tasksExtension = "io.modelcontextprotocol/tasks"

// serveTasks answers the task methods and the calls that become tasks,
// and passes everything else to next.
func (s *Server) serveTasks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := rpcRequestOf(r)
		if r.Method != http.MethodPost || callerFrom(r.Context()) == nil || req.Method != "tools/call" && !strings.HasPrefix(req.Method, "tasks/") {
			next.ServeHTTP(w, r)
			return
		}
		modern := r.Header.Get("MCP-Protocol-Version") >= statelessVersion
		var p struct {
			Name string `json:"name"`
			Task *struct {
				TTL int64 `json:"ttl"`
			} `json:"task"`
			Meta struct {
				Caps struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		_, declared := p.Meta.Caps.Extensions[tasksExtension]
		switch {
		case req.Method == "tools/call" && !modern && p.Task != nil:
			s.startTask(w, r, req, time.Duration(p.Task.TTL)*time.Millisecond, false)
		case req.Method == "tools/call" && modern && declared && slices.Contains(taskTools, p.Name):
			s.startTask(w, r, req, taskTTL, true)
		case !modern && slices.Contains([]string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list"}, req.Method):
			s.taskMethod(w, r, req, false)
		case modern && slices.Contains([]string{"tasks/get", "tasks/update", "tasks/cancel"}, req.Method):
			if !declared {
				writeRPCError(w, req.ID, rpcError{Code: -32021, Message: "missing required client capability: the " + tasksExtension + " extension",
					Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`)})
				return
			}
			s.taskMethod(w, r, req, true)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// startTask records the task, answers with it, and runs the call in the
// background, on a context of its own that tasks/cancel cancels.
func (s *Server) startTask(w http.ResponseWriter, r *http.Request, req rpcRequest, ttl time.Duration, modern bool) {
	c := callerFrom(r.Context())
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if ttl <= 0 || ttl > maxTaskTTL {
		ttl = taskTTL
	}
	task, err := s.store.CreateTask(r.Context(), c.worker, p.Name, ttl)
	if err != nil {
		writeRPCError(w, req.ID, rpcError{Code: -32603, Message: err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.CallTimeout)
	rt := runningTask{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.running[task.ID] = rt
	s.mu.Unlock()
	go s.runTask(ctx, c, task.ID, p.Name, p.Arguments, rt)
	if modern {
		created := taskJSON(task, true)
		created["resultType"] = "task"
		writeRPC(w, req.ID, created)
		return
	}
	writeRPC(w, req.ID, map[string]any{"task": taskJSON(task, false)})
}

// runTask makes the call and keeps its answer as the task's end.
func (s *Server) runTask(ctx context.Context, c *caller, id, tool string, args json.RawMessage, rt runningTask) {
	defer func() {
		rt.cancel()
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
		close(rt.done)
	}()
	held := make(chan struct{})
	go func() { defer close(held); s.holdTaskLease(ctx, id, rt.cancel) }()
	defer func() { rt.cancel(); <-held }()
	env := s.env(c)
	res, err := tools.Call(ctx, env, c.granted, tool, args).Result(ctx, env)
	s.countCall(env.Known, tool, res, err)
	var kept taskAnswer
	status, message := store.TaskCompleted, ""
	switch {
	case err != nil:
		status, message = store.TaskFailed, err.Error()
		kept.Error = &rpcError{Code: -32603, Message: message}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status, message = store.TaskFailed, "the call ran out of time"
		kept.Error = &rpcError{Code: -32603, Message: message}
	default:
		kept.Result, _ = json.Marshal(res)
	}
	answer, _ := json.Marshal(kept)
	// The end is recorded even though the call's own context is done.
	if _, err := s.store.EndTask(context.WithoutCancel(ctx), id, status, message, answer); err != nil {
		s.log.Error("end task", "task", id, "err", err)
	}
}

// holdTaskLease renews a running task's lease every third of a lease, so
// other servers on a shared database know its call lives. A lease that
// cannot be renewed means the task ended elsewhere — cancelled through
// another server — so the call is stopped.
func (s *Server) holdTaskLease(ctx context.Context, id string, stop context.CancelFunc) {
	t := time.NewTicker(s.taskRenew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		working, err := s.store.RenewTaskLease(context.WithoutCancel(ctx), id)
		switch {
		case err != nil:
			s.log.Error("renew task lease", "task", id, "err", err)
		case !working:
			stop()
			return
		}
	}
}

// countCall counts a call the server answers itself (a task's, or
// serveCalls') as countToolCalls counts the calls the SDK serves.
func (s *Server) countCall(known []string, tool string, res *mcp.CallToolResult, err error) {
	if s.cfg.Metrics == nil {
		return
	}
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "rejected"
	case res.IsError:
		outcome = "tool_error"
	}
	if !slices.Contains(known, tool) {
		tool = "unknown"
	}
	s.cfg.Metrics.ToolCall(tool, outcome)
}

// taskAnswer is what a task keeps of its call: the result, or an error.
type taskAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// taskMethod answers the task methods for the caller's own tasks.
func (s *Server) taskMethod(w http.ResponseWriter, r *http.Request, req rpcRequest, modern bool) {
	worker := callerFrom(r.Context()).worker
	if req.Method == "tasks/list" {
		tasks, err := s.store.ListTasks(r.Context(), worker)
		if err != nil {
			writeRPCError(w, req.ID, rpcError{Code: -32603, Message: err.Error()})
			return
		}
		list := make([]map[string]any, len(tasks))
		for i, t := range tasks {
			list[i] = taskJSON(t, false)
		}
		writeRPC(w, req.ID, map[string]any{"tasks": list})
		return
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	task, err := s.store.GetTask(r.Context(), worker, p.TaskID)
	if errors.Is(err, domain.ErrNotFound) {
		writeRPCError(w, req.ID, rpcError{Code: -32602, Message: fmt.Sprintf("no task %q of %s (tasks are kept until their ttl)", p.TaskID, worker)})
		return
	}
	if err != nil {
		writeRPCError(w, req.ID, rpcError{Code: -32603, Message: err.Error()})
		return
	}
	switch {
	case req.Method == "tasks/get" && modern:
		writeRPC(w, req.ID, detailedTask(task))
	case req.Method == "tasks/get":
		writeRPC(w, req.ID, taskJSON(task, false))
	case req.Method == "tasks/update": // no task of ours asks for input
		writeRPC(w, req.ID, map[string]any{"resultType": "complete"})
	case req.Method == "tasks/cancel":
		s.cancelTask(w, r, req, task, modern)
	case req.Method == "tasks/result":
		s.taskResult(w, r, req, task)
	}
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request, req rpcRequest, task store.Task, modern bool) {
	if task.Status != store.TaskWorking {
		if modern { // cancelling is cooperative: an ended task is acknowledged as it is
			writeRPC(w, req.ID, map[string]any{"resultType": "complete"})
			return
		}
		writeRPCError(w, req.ID, rpcError{Code: -32602, Message: fmt.Sprintf("task %s already ended: %s", task.ID, task.Status)})
		return
	}
	ended, err := s.store.EndTask(r.Context(), task.ID, store.TaskCancelled, "cancelled by "+task.Worker, nil)
	if err != nil {
		writeRPCError(w, req.ID, rpcError{Code: -32603, Message: err.Error()})
		return
	}
	s.mu.Lock()
	if rt, ok := s.running[task.ID]; ok {
		rt.cancel()
	}
	s.mu.Unlock()
	if modern {
		writeRPC(w, req.ID, map[string]any{"resultType": "complete"})
		return
	}
	writeRPC(w, req.ID, taskJSON(ended, false))
}

// taskResult waits for the task to end, then answers as the call would
// have, with the task named in _meta. The task the caller read may be
// stale by now — its call can end between that read and this one — so
// its end is always read again from the store. A task another server is
// running is polled there until it ends.
func (s *Server) taskResult(w http.ResponseWriter, r *http.Request, req rpcRequest, task store.Task) {
	for polls := 0; task.Status == store.TaskWorking; polls++ {
		s.mu.Lock()
		rt, running := s.running[task.ID]
		s.mu.Unlock()
		var tick <-chan time.Time
		switch {
		case running:
		case polls == 0:
			tick = time.After(0) // most likely ended since the caller read it
		default:
			tick = time.After(taskPoll * time.Millisecond)
		}
		select {
		case <-rt.done: // nil, never ready, unless this server runs it
		case <-tick:
		case <-r.Context().Done():
			return
		}
		var err error
		if task, err = s.store.GetTask(r.Context(), task.Worker, task.ID); err != nil {
			writeRPCError(w, req.ID, rpcError{Code: -32603, Message: err.Error()})
			return
		}
	}
	result, rerr := taskAnswerOf(task)
	switch {
	case rerr != nil:
		writeRPCError(w, req.ID, *rerr)
	case result != nil:
		delete(result, "resultType") // 2025-11-25 has none
		meta, _ := result["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[relatedTask] = map[string]any{"taskId": task.ID}
		result["_meta"] = meta
		writeRPC(w, req.ID, result)
	default:
		writeRPCError(w, req.ID, rpcError{Code: -32603, Message: fmt.Sprintf("task %s %s: %s", task.ID, task.Status, task.Message)})
	}
}

// taskAnswerOf reads what a task kept of its call.
func taskAnswerOf(task store.Task) (map[string]any, *rpcError) {
	var kept struct {
		Result map[string]any `json:"result"`
		Error  *rpcError      `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(task.Result))
	dec.UseNumber() // numbers pass through exactly
	_ = dec.Decode(&kept)
	return kept.Result, kept.Error
}

// detailedTask is a task as 2026-07-28's tasks/get answers it: with the
// call's result once completed, its error once failed.
func detailedTask(task store.Task) map[string]any {
	out := taskJSON(task, true)
	out["resultType"] = "complete"
	result, rerr := taskAnswerOf(task)
	switch task.Status {
	case store.TaskCompleted:
		if result != nil {
			result["resultType"] = "complete"
			out["result"] = result
		}
	case store.TaskFailed:
		if rerr == nil {
			rerr = &rpcError{Code: -32603, Message: task.Message}
		}
		out["error"] = rerr
	}
	return out
}

// runningTask is a task this process is running.
type runningTask struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// taskJSON is a task as MCP's Task type: 2026-07-28 names its durations
// ttlMs and pollIntervalMs, 2025-11-25 ttl and pollInterval.
func taskJSON(t store.Task, modern bool) map[string]any {
	ttl, poll := "ttl", "pollInterval"
	if modern {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	out := map[string]any{"taskId": t.ID, "status": t.Status, "createdAt": t.CreatedAt.Format(time.RFC3339Nano),
		"lastUpdatedAt": t.UpdatedAt.Format(time.RFC3339Nano), ttl: t.ExpiresAt.Sub(t.CreatedAt).Milliseconds(), poll: taskPoll}
	if t.Message != "" {
		out["statusMessage"] = t.Message
	}
	return out
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// writeRPC writes a JSON-RPC result.
func writeRPC(w http.ResponseWriter, id json.RawMessage, result any) {
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// writeRPCError writes a JSON-RPC error.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, e rpcError) {
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}
