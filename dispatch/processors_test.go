package dispatch_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/github"
)

// realworld holds payloads nobody here wrote (/work/shared/realworld).
var realworld = func() string {
	if d := os.Getenv("HELIX_ORG_REALWORLD"); d != "" {
		return d
	}
	return "/work/shared/realworld"
}()

// ghDelivery is one real GitHub payload as the github transport parses it,
// with where the route under test must send it, decided in Go from the
// payload rather than by the expressions.
type ghDelivery struct {
	in   domain.Inbound
	want string
}

// githubDeliveries reads n deliveries from the real payloads, cycling
// through them, each under a delivery id of its own.
func githubDeliveries(t *testing.T, stream string, n int) []ghDelivery {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realworld, "github/payload-examples/api.github.com/*/*.json"))
	if err != nil || len(files) < 100 {
		t.Fatalf("real GitHub payloads under %s: %d files, %v", realworld, len(files), err)
	}
	var out []ghDelivery
	for i := 0; len(out) < n; i++ {
		path := files[i%len(files)]
		event := filepath.Base(filepath.Dir(path))
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("gh-%d", i)
		d, err := github.Parse(event, id, body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var p struct {
			Action string `json:"action"`
		}
		json.Unmarshal(body, &p)
		want := "s-other"
		switch {
		case event == "issues" && p.Action == "opened":
			want = "s-new-issues"
		case strings.HasPrefix(event, "pull_request"):
			want = "s-prs"
		case event == "push":
			want = "s-pushes"
		}
		out = append(out, ghDelivery{in: domain.Inbound{StreamID: stream, Message: d.Message, Key: id, Contents: d.Contents}, want: want})
	}
	return out
}

const ghRoute = `{"routes": [
	{"expr": "message.extra.event == \"issues\" && message.extra.action == \"opened\"", "output": "s-new-issues"},
	{"expr": "message.extra.event.startsWith(\"pull_request\")", "output": "s-prs"},
	{"expr": "source.kind == \"github\" && message.extra.event == \"push\"", "output": "s-pushes"}],
	"default": "s-other"}`

// procFixture is an org with a github stream, s-gh, and the dispatcher.
func procFixture(t *testing.T) *fixture {
	t.Helper()
	st := storetest.NewWith(t, store.Options{Transports: domain.NewTransports(github.Transport.TransportSpec)})
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, tools.Names()); err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-echo", Title: "Echo", Content: "Reply."}))
	must(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-echo", RoleID: "r-echo", Title: "Echo"}))
	must(st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-gh", Name: "gh", Transport: domain.Transport{Kind: github.Kind,
		Config: json.RawMessage(`{"repo":"octo/repo","events":["issues","pull_request","push"]}`)}}))
	rec := newRecorder()
	dir := t.TempDir()
	d := dispatch.New(st, rec, dispatch.Options{EnvsDir: dir, MCPBaseURL: "http://127.0.0.1:1"})
	return &fixture{st: st, rec: rec, d: d, dir: dir}
}

// tool calls a tool as the owner, as the UI and the CLI do.
func (f *fixture) tool(t *testing.T, name string, args any, out any) {
	t.Helper()
	raw, _ := json.Marshal(args)
	got, err := tools.Invoke(t.Context(), &tools.Env{Store: f.st, Caller: "w-owner", Known: tools.Names()}, tools.Names(), name, raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// streamEvents reads every event of a stream, oldest first.
func streamEvents(t *testing.T, st *store.Store, stream string) []domain.Event {
	t.Helper()
	var out []domain.Event
	for since := int64(0); ; {
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return out
		}
		out = append(out, evs...)
		since = evs[len(evs)-1].Seq
	}
}

type preview struct {
	Events []struct {
		Event   string                   `json:"event"`
		Outputs []domain.ProcessorOutput `json:"outputs"`
		Error   string                   `json:"error"`
	} `json:"events"`
}

// TestRouteOverGitHubEvents: a route over 1,000 deliveries of the real
// GitHub payloads sends each to the one output its event and action call
// for — exactly once, carrying the input's label and naming it — and the
// preview, run before, said the same of each.
func TestRouteOverGitHubEvents(t *testing.T) {
	f := procFixture(t)
	ctx := t.Context()
	var p domain.Processor
	f.tool(t, "create_processor", map[string]any{"id": "proc-triage", "input": "s-gh", "kind": "route", "config": json.RawMessage(ghRoute)}, &p)
	deliveries := githubDeliveries(t, "s-gh", 1000)
	want := map[string]string{} // input event → output stream
	for i := 0; i < len(deliveries); i += 50 {
		batch := deliveries[i:min(i+50, len(deliveries))]
		var in []domain.Inbound
		for _, d := range batch {
			in = append(in, d.in)
		}
		receipts, err := f.st.AppendInbound(ctx, in, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range receipts {
			want[r.Event.ID] = batch[j].want
		}
	}
	// The preview of the latest 100, before the processor has run.
	var pv preview
	f.tool(t, "preview_processor", map[string]any{"id": "proc-triage", "last": 100}, &pv)
	previewed := map[string]domain.ProcessorOutput{}
	for _, e := range pv.Events {
		if e.Error != "" || len(e.Outputs) != 1 {
			t.Fatalf("preview of %s: %d outputs, error %q; want one", e.Event, len(e.Outputs), e.Error)
		}
		previewed[e.Event] = e.Outputs[0]
	}
	if len(previewed) != 100 {
		t.Fatalf("preview covered %d events; want 100", len(previewed))
	}
	f.settle(t)

	got := map[string]string{}
	counts := map[string]int{}
	for _, stream := range []string{"s-new-issues", "s-prs", "s-pushes", "s-other"} {
		for _, ev := range streamEvents(t, f.st, stream) {
			if prev, dup := got[ev.CausedBy]; dup {
				t.Errorf("input %s written twice: to %s and %s", ev.CausedBy, prev, stream)
			}
			got[ev.CausedBy] = stream
			counts[stream]++
			if !ev.Label.Untrusted || !strings.Contains(ev.Label.Origin, "github event") {
				t.Errorf("output %s on %s has label %v; want the input's (untrusted, from github)", ev.ID, stream, ev.Label)
			}
			if pw, ok := previewed[ev.CausedBy]; ok && (pw.Stream != stream || pw.Message.Subject != ev.Message.Subject || pw.Message.Body != ev.Message.Body) {
				t.Errorf("input %s: the preview said %s %q, the processor wrote %s %q", ev.CausedBy, pw.Stream, pw.Message.Subject, stream, ev.Message.Subject)
			}
		}
	}
	for in, stream := range want {
		if got[in] != stream {
			t.Errorf("input %s went to %q; want %q", in, got[in], stream)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d outputs for %d inputs", len(got), len(want))
	}
	t.Logf("1,000 GitHub events routed: %v", counts)
	for _, s := range []string{"s-new-issues", "s-prs", "s-pushes", "s-other"} {
		if counts[s] == 0 {
			t.Errorf("no event went to %s; the payloads should cover every route", s)
		}
	}
	p, err := f.st.GetProcessor(ctx, "proc-triage")
	if err != nil || p.Processed != 1000 || p.Pending != 0 || p.Failed != 0 {
		t.Errorf("processor = %+v, %v; want 1000 processed, none pending or failed", p, err)
	}
}

// TestFilteredOutputWakesOnlyForMatches: an AI worker subscribed to a
// filter's output runs once per matching event and never for the rest,
// while one subscribed to the input runs for every event.
func TestFilteredOutputWakesOnlyForMatches(t *testing.T) {
	f := procFixture(t)
	ctx := t.Context()
	var p domain.Processor
	f.tool(t, "create_processor", map[string]any{"input": "s-gh", "kind": "filter", "outputs": []string{"s-opened"},
		"config": map[string]any{"expr": `message.extra.event == "issues" && message.extra.action == "opened"`}}, &p)
	for _, w := range []struct{ id, stream string }{{"w-filtered", "s-opened"}, {"w-all", "s-gh"}} {
		if _, err := f.st.HireWorker(ctx, "w-owner", domain.Worker{ID: w.id, Kind: domain.WorkerAI, PositionID: "p-echo", Name: w.id}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.Subscribe(ctx, "w-owner", w.stream, w.id); err != nil {
			t.Fatal(err)
		}
	}
	f.settle(t) // the hires' own activations
	f.rec.reset()
	matches := 0
	for _, d := range githubDeliveries(t, "s-gh", 150) {
		if _, err := f.st.AppendInbound(ctx, []domain.Inbound{d.in}, 0); err != nil {
			t.Fatal(err)
		}
		if d.want == "s-new-issues" {
			matches++
		}
		f.settle(t) // one event at a time: each wakes its workers alone
		for len(f.rec.started) > 0 {
			<-f.rec.started
		}
	}
	runs := map[string]int{}
	for _, w := range f.rec.workers() {
		runs[w]++
	}
	if matches == 0 || runs["w-filtered"] != matches || runs["w-all"] != 150 {
		t.Errorf("activations %v for %d matching events of 150; want w-filtered %d, w-all 150", runs, matches, matches)
	}
}

// TestProcessorFailureIsRecorded: an event the processor fails on (an
// expression over a key the event lacks) is recorded on the processor
// and wakes nobody; the events after it are still processed.
func TestProcessorFailureIsRecorded(t *testing.T) {
	f := procFixture(t)
	var p domain.Processor
	f.tool(t, "create_processor", map[string]any{"id": "proc-f", "input": "s-gh", "kind": "filter", "outputs": []string{"s-labelled"},
		"config": map[string]any{"expr": `message.extra.label.name == "bug"`}}, &p)
	var in []domain.Inbound
	for _, d := range githubDeliveries(t, "s-gh", 274) {
		in = append(in, d.in)
	}
	if _, err := f.st.AppendInbound(t.Context(), in, 0); err != nil {
		t.Fatal(err)
	}
	f.settle(t)
	p, err := f.st.GetProcessor(t.Context(), "proc-f")
	if err != nil {
		t.Fatal(err)
	}
	if p.Failed == 0 || p.Processed == 0 || p.Processed+p.Failed != 274 || p.Pending != 0 || !strings.Contains(p.LastError, "no such key: label") {
		t.Errorf("processor = processed %d, failed %d, pending %d, last error %q; want both, adding to 274, failures for a missing key", p.Processed, p.Failed, p.Pending, p.LastError)
	}
}
