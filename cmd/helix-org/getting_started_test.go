package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// startServe runs the real serve wiring — HTTP with every transport's
// routes, the dispatcher and the outbound delivery engine — in-process on a
// loopback listener, logging to logs, and returns its base URL, its
// environments directory and the owner's session.
func startServe(t *testing.T, st *store.Store, logs io.Writer) (base, envs string, owner *mcp.ClientSession) {
	t.Helper()
	return startServeWith(t, st, logs, serveConfig{})
}

// startServeWith is startServe with more of serve's config.
func startServeWith(t *testing.T, st *store.Store, logs io.Writer, cfg serveConfig) (base, envs string, owner *mcp.ClientSession) {
	t.Helper()
	base, envs, _ = serveInProcess(t, st, logs, cfg)
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	owner, err := servertest.Dial(t, base+"/workers/w-owner/mcp", servertest.Token(t, st, "w-owner"))
	if err != nil {
		t.Fatal(err)
	}
	return base, envs, owner
}

// serveInProcess runs serve on a loopback listener until stop, which
// returns what serve returned, as a SIGTERM would; t's end stops it too,
// and fails t if serve failed.
func serveInProcess(t *testing.T, st *store.Store, logs io.Writer, cfg serveConfig) (base, envs string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg.EnvsDir, cfg.ShutdownGrace = filepath.Join(t.TempDir(), "envs"), 5*time.Second
	os.MkdirAll(cfg.EnvsDir, 0o700)
	log := slog.New(slog.DiscardHandler)
	if logs != io.Discard {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	go func() { done <- serveOn(ctx, ln, st, cfg, log) }()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), cfg.EnvsDir, stop
}

// agentCommand is a command line that runs this test binary as an agent.
func agentCommand(t *testing.T, mode string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "HELIX_ORG_TEST_AGENT=" + mode + " exec " + exe
}

// waitForReply long-polls a stream until an event from `from` arrives.
func waitForReply(t *testing.T, cs *mcp.ClientSession, stream, from string, since int64) domain.Event {
	t.Helper()
	return waitForReplyWithin(t, cs, stream, from, since, 30*time.Second)
}

// waitForReplyWithin is waitForReply for replies that take longer (a
// first python skill build).
func waitForReplyWithin(t *testing.T, cs *mcp.ClientSession, stream, from string, since int64, d time.Duration) domain.Event {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		out := servertest.Call[struct {
			Events []domain.Event `json:"events"`
			Cursor int64          `json:"cursor"`
		}](t, cs, "read_events", map[string]any{"streams": []string{stream}, "since": since, "wait": 5})
		for _, ev := range out.Events {
			if ev.Source == from {
				return ev
			}
		}
		since = out.Cursor
	}
	t.Fatalf("no reply from %s on %s", from, stream)
	return domain.Event{}
}

// TestGettingStarted is the README's getting-started scenario through the
// real server, dispatcher and command runtime, with an agent that really
// connects to its MCP endpoint from mcp.json and follows role.md.
func TestGettingStarted(t *testing.T) {
	t.Setenv("HELIX_ORG_SERVER_CANARY", "canary-7f3a9")
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	st.SetSetting(ctx, agent.RuntimeSetting, agent.RuntimeCommand)
	// The echo agent reports its token in a file outside the envs
	// directory, so the test can try it once the run is over.
	tokenFile := filepath.Join(t.TempDir(), "token")
	st.SetSetting(ctx, agent.CommandSetting, "HELIX_ORG_TEST_TOKEN_FILE="+tokenFile+" "+agentCommand(t, "echo"))
	shareWithAgents(t, st, filepath.Dir(tokenFile))
	base, envs, owner := startServe(t, st, io.Discard)

	call := func(name string, args map[string]any) map[string]any {
		return servertest.Call[map[string]any](t, owner, name, args)
	}
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	call("invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})

	hello := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
	reply := waitForReply(t, owner, "s-inbox", "w-echo", hello.Seq)
	if reply.Message.Body != "echo: hello" || reply.Message.InReplyTo != hello.ID || reply.SourceKind != domain.SourceAI {
		t.Errorf("reply = %+v, want echo: hello in reply to %s", reply.Message, hello.ID)
	}
	if !strings.HasPrefix(reply.CausedBy, "a-") {
		t.Errorf("reply causedBy = %q, want the activation id", reply.CausedBy)
	}

	call("update_role", map[string]any{"id": "r-echo", "content": "When a message arrives, reply `loud: <BODY UPPERCASED>` on the same stream."})
	hello2 := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello"})
	reply2 := waitForReply(t, owner, "s-inbox", "w-echo", hello2.Seq)
	if reply2.Message.Body != "loud: HELLO" {
		t.Errorf("after update_role reply = %q, want loud: HELLO", reply2.Message.Body)
	}

	// The echo's own replies never woke it: its runs were woken by the
	// hire and the two messages only (the hire and the first message may
	// share a run when the message lands before the hire run starts).
	waitIdle(t, st)
	acts, _ := st.ListActivations(ctx, "w-echo")
	woken := 0
	for _, a := range acts {
		trigs, err := st.ActivationTriggers(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trigs {
			woken++
			if tr.Event.Source == "w-echo" {
				t.Errorf("w-echo was woken by its own event %s: %q", tr.Event.ID, tr.Event.Message.Body)
			}
		}
	}
	if woken != 3 || len(acts) < 2 {
		t.Errorf("w-echo ran %d activations over %d triggers, want 3 triggers (hire, hello, hello) in 2 or 3 runs", len(acts), woken)
	}
	log := servertest.Call[struct {
		Events []domain.Event `json:"events"`
	}](t, owner, "worker_log", map[string]any{"worker": "w-echo"})
	var text strings.Builder
	for _, ev := range log.Events {
		text.WriteString(ev.Message.Body + "\n")
	}
	for _, want := range []string{"started with 1 trigger", "replied: echo: hello", "replied: loud: HELLO", "succeeded", "HELIX_ORG_TOKEN", "HELIX_ORG_ACTIVATION",
		"cross-worker probe: 403"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("activation log lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "HELIX_ORG_SERVER_CANARY") {
		t.Error("the server's own environment leaked into the agent's")
	}

	// The activation's token died with its activation.
	data, err := os.ReadFile(filepath.Join(envs, "w-echo", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil || !strings.HasPrefix(string(tok), store.ActivationTokenPrefix) {
		t.Fatalf("the agent's token = %q, %v; want an hxa_ token", tok, err)
	}
	url, _, _ := domain.ReadMCPConfig(data, func(k string) string {
		return map[string]string{domain.MCPURLEnv: domain.MCPURL(base, "w-echo")}[k]
	})
	if code := probe(url, string(tok)); code != 401 {
		t.Errorf("activation token after its run: status %d, want 401", code)
	}
}

// waitIdle waits, on store commits, until no trigger is pending and no
// activation is running.
func waitIdle(t *testing.T, st *store.Store) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := st.Changed()
		n, err := st.PendingTriggers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		acts, err := st.ListActivations(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, a := range acts {
			if a.Status == domain.ActivationRunning {
				running++
			}
		}
		if n == 0 && running == 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("not idle after 30s: %d triggers pending, %d activations running", n, running)
		}
	}
}
