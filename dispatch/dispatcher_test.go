package dispatch_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// recorder is a Spawner that records every run and can hold runs until released.
type recorder struct {
	mu      sync.Mutex
	runs    []domain.Run
	started chan domain.Run
	hold    chan struct{}
	during  func(domain.Run)
}

func newRecorder() *recorder { return &recorder{started: make(chan domain.Run, 100)} }

func (r *recorder) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	run.Started(domain.AgentProcess{})
	r.mu.Lock()
	r.runs = append(r.runs, run)
	hold, during := r.hold, r.during
	r.mu.Unlock()
	if during != nil {
		during(run)
	}
	r.started <- run
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return domain.RunResult{ExitStatus: -1}, ctx.Err()
		}
	}
	return domain.RunResult{}, nil
}

func (r *recorder) workers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ws []string
	for _, run := range r.runs {
		ws = append(ws, run.WorkerID)
	}
	return ws
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.runs = nil
	r.mu.Unlock()
	for len(r.started) > 0 {
		<-r.started
	}
}

type fixture struct {
	st  *store.Store
	rec *recorder
	d   *dispatch.Dispatcher
	dir string
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, nil) }

// newFixtureWith builds the echo org; a nil spawner records runs.
func newFixtureWith(t *testing.T, sp domain.Runtime) *fixture {
	t.Helper()
	return newFixtureAt(t, sp, nil, dispatch.Options{})
}

// newFixtureAt is newFixtureWith on a store with the given clock (nil:
// the real one) and with the given options.
func newFixtureAt(t *testing.T, sp domain.Runtime, now func() time.Time, opts dispatch.Options) *fixture {
	t.Helper()
	st := storetest.NewWithClock(t, now)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-echo", Title: "Echo", Content: "Reply `echo: <body>`."}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-echo", RoleID: "r-echo", Title: "Echo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-inbox", Name: "inbox", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	if sp == nil {
		sp = rec
	}
	dir := t.TempDir()
	opts.EnvsDir, opts.MCPBaseURL = dir, "http://127.0.0.1:1"
	d := dispatch.New(st, sp, opts)
	return &fixture{st: st, rec: rec, d: d, dir: dir}
}

func (f *fixture) hire(t *testing.T, id string, kind domain.WorkerKind) {
	t.Helper()
	if _, err := f.st.HireWorker(t.Context(), "w-owner", domain.Worker{ID: id, Kind: kind, PositionID: "p-echo", Name: id, Identity: "I am " + id}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Subscribe(t.Context(), "w-owner", "s-inbox", id); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) publish(t *testing.T, from, body string) domain.Event {
	t.Helper()
	ev, err := f.st.Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: from, Message: domain.Message{From: from, Body: body}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// settle runs steps until nothing is pending and nothing runs.
func (f *fixture) settle(t *testing.T) {
	t.Helper()
	for range 100 {
		if err := f.d.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.d.Wait()
		n, err := f.st.PendingTriggers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("triggers never settled")
}

func TestHireWakesAIWorkerOnce(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.hire(t, "w-maya", domain.WorkerHuman)
	f.settle(t)
	if diff := cmp.Diff([]string{"w-echo"}, f.rec.workers()); diff != "" {
		t.Errorf("activated workers (-want +got):\n%s", diff)
	}
	if p := f.rec.runs[0].Prompt; !strings.Contains(p, "You have just been hired") {
		t.Errorf("hire prompt = %q", p)
	}
}

func TestPublishWakesSubscribedAIWorkersButNotPublisherOrHumans(t *testing.T) {
	f := newFixture(t)
	for _, w := range []string{"w-a", "w-b"} {
		f.hire(t, w, domain.WorkerAI)
	}
	f.hire(t, "w-maya", domain.WorkerHuman)
	f.settle(t)
	f.rec.reset()

	tests := []struct {
		name       string
		from       string
		want       []string
		sourceKind domain.SourceKind
	}{
		{"ai publisher skipped", "w-a", []string{"w-b"}, domain.SourceAI},
		{"human publisher wakes all AI", "w-maya", []string{"w-a", "w-b"}, domain.SourceHuman},
		{"system event wakes all AI", "", []string{"w-a", "w-b"}, domain.SourceSystem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.rec.reset()
			ev := f.publish(t, tt.from, "hello")
			f.settle(t)
			got := f.rec.workers()
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
			for _, run := range f.rec.runs {
				for _, want := range []string{ev.ID, "source: ", "(" + string(tt.sourceKind) + ")", "hello", "[1/1]"} {
					if !strings.Contains(run.Prompt, want) {
						t.Errorf("prompt of %s lacks %q:\n%s", run.WorkerID, want, run.Prompt)
					}
				}
			}
		})
	}
}

func TestCoalescesTriggersArrivingDuringARun(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	f.settle(t)
	f.rec.reset()

	hold := make(chan struct{})
	f.rec.setHold(hold)
	f.publish(t, "w-owner", "first")
	if err := f.d.Step(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-f.rec.started // the first run is now held
	var later []string
	for _, body := range []string{"second", "third", "fourth"} {
		later = append(later, f.publish(t, "w-owner", body).ID)
		if err := f.d.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	f.rec.setHold(nil)
	close(hold)
	f.d.Wait()
	f.settle(t)

	acts, err := f.st.ListActivations(t.Context(), "w-echo")
	if err != nil {
		t.Fatal(err)
	}
	acts = acts[1:] // drop the hire activation
	if len(acts) != 2 {
		t.Fatalf("got %d activations after the hire, want 2", len(acts))
	}
	if len(acts[1].TriggerIDs) != 3 {
		t.Errorf("second activation has %d triggers, want 3", len(acts[1].TriggerIDs))
	}
	second := f.rec.runs[1].Prompt
	pos := -1
	for i, id := range later {
		p := strings.Index(second, id)
		if p < pos {
			t.Errorf("trigger %s out of order in prompt", id)
		}
		pos = p
		if !strings.Contains(second, "["+string(rune('1'+i))+"/3]") {
			t.Errorf("prompt lacks [%d/3]:\n%s", i+1, second)
		}
	}
}

func (r *recorder) setHold(c chan struct{}) {
	r.mu.Lock()
	r.hold = c
	r.mu.Unlock()
}

func TestProjectsEnvironmentAndScopesTheToken(t *testing.T) {
	f := newFixture(t)
	f.hire(t, "w-echo", domain.WorkerAI)
	type seen struct {
		files map[string]string
		tokOK bool
	}
	var during seen
	f.rec.during = func(run domain.Run) {
		during.files = map[string]string{}
		for _, name := range []string{"role.md", "identity.md", "agent.md", "mcp.json"} {
			b, err := os.ReadFile(filepath.Join(run.EnvDir, name))
			if err != nil {
				t.Errorf("read %s: %v", name, err)
			}
			during.files[name] = string(b)
		}
		info, err := f.st.VerifyToken(context.Background(), run.Token)
		during.tokOK = err == nil && info.WorkerID == "w-echo" && info.ActivationID == run.ActivationID
	}
	f.settle(t)
	run := f.rec.runs[0]
	if run.EnvDir != filepath.Join(f.dir, "w-echo") {
		t.Errorf("env dir = %s", run.EnvDir)
	}
	if !strings.Contains(during.files["role.md"], "echo: <body>") || !strings.Contains(during.files["identity.md"], "I am w-echo") ||
		!strings.Contains(during.files["agent.md"], "How to act on a trigger") {
		t.Errorf("projected files = %v", during.files)
	}
	url, tok, err := domain.ReadMCPConfig([]byte(during.files["mcp.json"]), func(k string) string {
		return map[string]string{domain.TokenEnv: run.Token, domain.MCPURLEnv: run.MCPURL}[k]
	})
	if err != nil || url != "http://127.0.0.1:1/workers/w-echo/mcp" || tok != run.Token {
		t.Errorf("mcp.json gives url=%q token=%q err=%v", url, tok, err)
	}
	for name, content := range during.files {
		if strings.Contains(content, run.Token) || strings.Contains(content, store.ActivationTokenPrefix) {
			t.Errorf("%s holds the run's token:\n%s", name, content)
		}
	}
	if !strings.HasPrefix(run.Token, store.ActivationTokenPrefix) || run.BaseURL != "http://127.0.0.1:1" {
		t.Errorf("run token %q, base %q: want an hxa_ token and the server's base URL", run.Token, run.BaseURL)
	}
	if !during.tokOK {
		t.Error("activation token was not valid for w-echo during the run")
	}
	if _, err := f.st.VerifyToken(t.Context(), run.Token); err == nil {
		t.Error("activation token still valid after the run")
	}
	info, err := os.Stat(filepath.Join(run.EnvDir, "mcp.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mcp.json mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}

	// A live role edit is what the next activation reads.
	if _, err := f.st.UpdateRole(t.Context(), "w-owner", "r-echo", store.RoleUpdate{Content: ptr("Reply `loud: <BODY>`.")}); err != nil {
		t.Fatal(err)
	}
	f.publish(t, "w-owner", "again")
	f.settle(t)
	if !strings.Contains(during.files["role.md"], "loud") {
		t.Errorf("role.md after edit = %q", during.files["role.md"])
	}
}

func ptr[T any](v T) *T { return &v }

func TestTimeoutKillsHungAgentAndRecordsError(t *testing.T) {
	f := newFixtureWith(t, &agent.Command{Line: "echo started; exec sleep 30"})
	st := f.st
	if err := st.SetSetting(t.Context(), dispatch.TimeoutSetting, "300ms"); err != nil {
		t.Fatal(err)
	}
	f.hire(t, "w-echo", domain.WorkerAI)
	start := time.Now()
	f.settle(t)
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("hung agent ran %s; the 300ms timeout should have killed it", el)
	}
	acts, err := st.ListActivations(t.Context(), "w-echo")
	if err != nil || len(acts) != 1 {
		t.Fatalf("activations = %v, %v", acts, err)
	}
	if acts[0].Status != domain.ActivationFailed || !strings.Contains(acts[0].Error, "timed out") {
		t.Errorf("activation = %+v, want failed with a timeout error", acts[0])
	}
	log := activationLog(t, st, "w-echo")
	for _, want := range []string{"started with 1 trigger", "started", "failed: timed out after 300ms"} {
		if !slices.ContainsFunc(log, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("activation log lacks %q: %q", want, log)
		}
	}
}

func activationLog(t *testing.T, st *store.Store, worker string) []string {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + worker}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		var extra map[string]string
		json.Unmarshal(e.Message.Extra, &extra)
		out = append(out, extra["kind"]+": "+e.Message.Body)
	}
	return out
}

func TestMaxConcurrentCapsRunningActivations(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.st.SetSetting(ctx, dispatch.MaxConcurrentSetting, "1")
	hold := make(chan struct{})
	f.rec.setHold(hold)
	f.hire(t, "w-a", domain.WorkerAI)
	f.hire(t, "w-b", domain.WorkerAI)
	if err := f.d.Step(ctx); err != nil {
		t.Fatal(err)
	}
	first := <-f.rec.started
	if err := f.d.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(f.rec.workers()); got != 1 {
		t.Errorf("%d activations running with max_concurrent=1", got)
	}
	f.rec.setHold(nil)
	close(hold)
	f.settle(t)
	got := f.rec.workers()
	if len(got) != 2 || got[0] != first.WorkerID {
		t.Errorf("runs = %v", got)
	}
}

func TestShutdownInterruptsAndKeepsTriggersPending(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.rec.setHold(make(chan struct{})) // never released
	f.hire(t, "w-echo", domain.WorkerAI)
	if err := f.d.Step(ctx); err != nil {
		t.Fatal(err)
	}
	<-f.rec.started
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := f.d.Shutdown(sctx); err == nil {
		t.Error("Shutdown returned nil though an activation outlived the deadline")
	}
	acts, _ := f.st.ListActivations(ctx, "w-echo")
	if len(acts) != 1 || acts[0].Status != domain.ActivationInterrupted {
		t.Fatalf("activations = %+v, want one interrupted", acts)
	}
	if n, _ := f.st.PendingTriggers(ctx); n != 1 {
		t.Errorf("pending triggers = %d, want the hire trigger back in the queue", n)
	}
	// The next start delivers it.
	rec := newRecorder()
	d2 := dispatch.New(f.st, rec, dispatch.Options{EnvsDir: f.dir, MCPBaseURL: "http://127.0.0.1:1"})
	if err := d2.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	d2.Step(ctx)
	d2.Wait()
	if diff := cmp.Diff([]string{"w-echo"}, rec.workers()); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}
