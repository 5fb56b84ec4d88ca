package main

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
)

// TestExampleAgentAnswersOffline: on a fresh org with no model, Claude
// Code or command configured, an AI worker is run by the example agent —
// the built-in agent in its sandbox, a rule in place of a model — and
// answers on the stream as its role says, through its MCP endpoint; a
// role with no rule gets a reply saying how to give it one or a model. A
// worker that may not publish cannot answer: its run fails saying so and
// how to grant it, rather than succeeding with nothing sent.
func TestExampleAgentAnswersOffline(t *testing.T) {
	t.Parallel()
	st := demoStore(t)
	logs := &demoLogBuffer{}
	_, _, owner := startServe(t, st, logs)
	call := func(tool string, args map[string]any) domain.Event {
		return servertest.Call[domain.Event](t, owner, tool, args)
	}
	publish := []string{"publish"}
	tests := []struct {
		worker, role string
		grants       []string
		body, want   string
	}{
		{"w-echo", "Reply `echo: <body>` on the stream you were woken by.", publish, "hello", "echo: hello"},
		{"w-shout", "Answer `YOU SAID <BODY>!` and nothing else.", publish, "quiet please", "YOU SAID QUIET PLEASE!"},
		{"w-plain", "Help customers.", publish, "hi there", "no model is configured, and my role has no reply rule"},
		{"w-mute", "Reply `echo: <body>` on the stream you were woken by.", nil, "anyone there?", ""},
	}
	for _, tt := range tests {
		name := strings.TrimPrefix(tt.worker, "w-")
		call("create_role", map[string]any{"id": "r-" + name, "title": name, "content": tt.role})
		call("create_position", map[string]any{"id": "p-" + name, "role": "r-" + name, "title": name})
		call("hire_worker", map[string]any{"id": tt.worker, "position": "p-" + name, "kind": "ai", "name": name, "grants": tt.grants})
		call("create_stream", map[string]any{"id": "s-" + name, "name": name})
		call("subscribe", map[string]any{"stream": "s-" + name, "worker": tt.worker})
	}
	waitIdle(t, st)
	for _, tt := range tests {
		name := strings.TrimPrefix(tt.worker, "w-")
		asked := call("publish", map[string]any{"stream": "s-" + name, "body": tt.body})
		if tt.want == "" {
			continue
		}
		var reply domain.Event
		waitFor(t, st, tt.worker+"'s reply", func() bool {
			for _, ev := range demoEvents(t, st, "s-"+name) {
				if ev.Source == tt.worker {
					reply = ev
					return true
				}
			}
			return false
		})
		if !strings.Contains(reply.Message.Body, tt.want) || reply.Message.InReplyTo != asked.ID {
			t.Errorf("%s answered %+v, want %q in reply to %s", tt.worker, reply.Message, tt.want, asked.ID)
		}
	}
	waitIdle(t, st)
	for _, tt := range tests {
		if tt.want == "" {
			acts, err := st.ListActivations(t.Context(), tt.worker)
			if err != nil || len(acts) != 2 {
				t.Fatalf("%s's runs = %+v, %v; want two", tt.worker, acts, err)
			}
			const why = `could not answer: w-mute holds no grant of publish; its manager can give it one with grant_tool {"worker": "w-mute", "tool": "publish"}`
			// The hire's run has nothing to answer; the message's fails.
			failed := 0
			for _, a := range acts {
				if a.Status == domain.ActivationFailed && strings.Contains(a.Error, why) {
					failed++
				}
			}
			if failed != 1 {
				t.Errorf("%s's runs = %+v; want one failed: %s", tt.worker, acts, why)
			}
			for _, ev := range demoEvents(t, st, "s-mute") {
				if ev.Source == tt.worker {
					t.Errorf("%s published %+v without a grant", tt.worker, ev.Message)
				}
			}
			continue
		}
		finished := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `msg="activation finished"`) && strings.Contains(line, "worker="+tt.worker+" ") {
				finished++
				if !strings.Contains(line, "runtime=example outcome=succeeded") {
					t.Errorf("%s's run: %s; want it succeeded on the example runtime", tt.worker, line)
				}
			}
		}
		if finished != 2 {
			t.Errorf("%s ran %d times, want 2 (the hire, the message)", tt.worker, finished)
		}
	}
}
