package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/agent/kubernetes/kubetest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// kubeOrg seeds n AI workers (w-k0…, each on its own stream s-k0…) on
// the kubernetes runtime, in namespace ns of the test cluster.
func kubeOrg(t *testing.T, st *store.Store, c *kubetest.Cluster, ns string, n int, lease time.Duration) {
	t.Helper()
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed the org: %v", err)
		}
	}
	must(st.Bootstrap(ctx, tools.Names()))
	must(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-k", Title: "Clerk", Content: "Handle it."}))
	must(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-k", RoleID: "r-k", Title: "Clerk"}))
	for i := range n {
		w, s := fmt.Sprintf("w-k%d", i), fmt.Sprintf("s-k%d", i)
		must(st.CreateStream(ctx, "w-owner", domain.Stream{ID: s, Name: s, Transport: domain.Transport{Kind: domain.TransportLocal}}))
		must(st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-k", Name: w}, nil))
		must(st.Subscribe(ctx, "w-owner", s, w))
	}
	for spec, v := range map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeKubernetes, &agent.ModelSetting: "claude-test",
		&kubernetes.KubeconfigSetting: c.Kubeconfig, &kubernetes.NamespaceSetting: ns, &kubernetes.ServerURLSetting: "http://helix-org.test.svc:8080",
		&dispatch.LeaseSetting: lease.String(), &dispatch.MaxConcurrentSetting: "20",
	} {
		if err := st.SetSetting(ctx, *spec, v); err != nil {
			t.Fatal(err)
		}
	}
}

// podCounter counts the pods the simulated kubelet ran, by Job.
type podCounter struct {
	mu   sync.Mutex
	jobs map[string]int
}

func (p *podCounter) add(job string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jobs[job]++
}

func (p *podCounter) count() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.jobs {
		out[k] = v
	}
	return out
}

func kubePublish(t *testing.T, st *store.Store, stream, body string) {
	t.Helper()
	if _, err := st.Append(t.Context(), domain.Event{StreamID: stream, Source: "w-owner", Message: domain.Message{From: "w-owner", Body: body}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkOneJobEach: every activation succeeded and ran in exactly one
// Job, with one pod, and no Job ran for anything else.
func checkOneJobEach(t *testing.T, acts []domain.Activation, pods map[string]int) {
	t.Helper()
	for _, a := range acts {
		if a.Status != domain.ActivationSucceeded {
			t.Errorf("activation %s of %s: %s (%s), want succeeded", a.ID, a.WorkerID, a.Status, a.Error)
		}
		if n := pods[kubernetes.JobName(a.ID)]; n != 1 {
			t.Errorf("activation %s ran %d Jobs' pods, want 1", a.ID, n)
		}
	}
	if len(pods) != len(acts) {
		t.Errorf("%d Jobs ran for %d activations, want one each", len(pods), len(acts))
	}
}

// TestKubernetesAdoptsJobsAfterSIGKILL: a server killed (SIGKILL) while
// its runs' Jobs run leaves them running; the server started after it on
// the same database adopts them — same activations, no second Job — and
// records their ends when they complete. On SQLite the new server's
// start-up recovery adopts them; on PostgreSQL, a database servers share,
// the new server takes each over once its lease lapses.
func TestKubernetesAdoptsJobsAfterSIGKILL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		db   func(t *testing.T, dir string) string
	}{
		{"sqlite", func(_ *testing.T, dir string) string { return filepath.Join(dir, "org.db") }},
		{"postgres", func(t *testing.T, _ string) string { return storetest.PostgresURL(t) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { adoptAfterSIGKILL(t, tt.name, tt.db) })
	}
}

func adoptAfterSIGKILL(t *testing.T, name string, dbOf func(t *testing.T, dir string) string) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "sigkill-"+name)
	pods := &podCounter{jobs: map[string]int{}}
	release := make(chan struct{})
	c.Simulate(t, ns, func(p *corev1.Pod) kubetest.Life {
		pods.add(p.Labels["job-name"])
		return kubetest.Life{Hold: true, Release: release, Log: podLines(p.Labels["job-name"])}
	})
	dir := t.TempDir()
	db, key := dbOf(t, dir), filepath.Join(dir, "org.key")
	st, err := store.Open(t.Context(), db, store.Options{KeyFile: key, Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const workers = 5
	kubeOrg(t, st, c, ns, workers, 3*time.Second)
	for i := range workers {
		kubePublish(t, st, fmt.Sprintf("s-k%d", i), "hello")
	}

	victim := startClusterServer(t, db, key, filepath.Join(dir, "first"))
	var cutOff []string
	until(t, 2*time.Minute, "every worker's Job running", func() bool {
		running, err := st.RunningActivations(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		cutOff = cutOff[:0]
		for _, a := range running {
			if a.Process != nil && pods.count()[kubernetes.JobName(a.ID)] == 1 {
				cutOff = append(cutOff, a.ID)
			}
		}
		return len(cutOff) == workers
	})
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()

	// On SQLite, Recover adopts before the second server answers; on
	// PostgreSQL it takes each run over once its lease lapses.
	startClusterServer(t, db, key, filepath.Join(dir, "second"))
	until(t, time.Minute, "every run's Job adopted", func() bool { return adoptedNotes(t, st, ns, workers) == workers })
	close(release)
	until(t, 2*time.Minute, "every trigger handled", func() bool {
		n, err1 := st.PendingTriggers(t.Context())
		running, err2 := st.RunningActivations(t.Context())
		return err1 == nil && err2 == nil && n == 0 && len(running) == 0
	})
	acts, err := st.ListActivations(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	checkOneJobEach(t, acts, pods.count())
	var ids []string
	for _, a := range acts {
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	slices.Sort(cutOff)
	if !slices.Equal(ids, cutOff) {
		t.Errorf("activations %v, want only the %d cut off by the kill, adopted: %v", ids, workers, cutOff)
	}
	if n := adoptedNotes(t, st, ns, workers); n != workers {
		t.Errorf("%d activation logs say their Job was adopted, want %d", n, workers)
	}
	checkAdoptedLogs(t, st, acts)
	jobs, err := c.Client.Jobs(t.Context(), ns)
	if err != nil || len(jobs.Items) != 0 {
		t.Errorf("Jobs left after the runs ended: %d (%v)", len(jobs.Items), err)
	}
}

// TestKubernetesTwoServersOneDatabase: two servers on one PostgreSQL
// database and one cluster, 100 events to 20 workers published while
// both dispatch: each activation is one Job, created once.
func TestKubernetesTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "two-servers")
	pods := &podCounter{jobs: map[string]int{}}
	c.Simulate(t, ns, func(p *corev1.Pod) kubetest.Life { pods.add(p.Labels["job-name"]); return kubetest.Life{} })
	url := storetest.PostgresURL(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "org.key")
	st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const workers = 20
	// No server dies here, so no lease needs to lapse: the default 30s,
	// not 5s, which 40 runs on a loaded two-core CI machine under -race
	// once outlasted between renewals (9 runs reaped, "lease lapsed").
	kubeOrg(t, st, c, ns, workers, 30*time.Second)
	for i := range 2 {
		startClusterServer(t, url, key, filepath.Join(dir, fmt.Sprint("server", i)))
	}
	began := time.Now()
	for i := range 100 {
		kubePublish(t, st, fmt.Sprintf("s-k%d", i%workers), fmt.Sprint("job ", i))
	}
	until(t, 3*time.Minute, "every trigger handled", func() bool {
		n, err1 := st.PendingTriggers(t.Context())
		running, err2 := st.RunningActivations(t.Context())
		return err1 == nil && err2 == nil && n == 0 && len(running) == 0
	})
	acts, err := st.ListActivations(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	checkOneJobEach(t, acts, pods.count())
	t.Logf("100 events to %d workers through two servers: %d activations, %d Jobs, in %s", workers, len(acts), len(pods.count()), time.Since(began).Round(time.Millisecond))
}

// podLines is what the agent in a Job's pod prints, as the built-in
// agent's stream-json.
func podLines(job string) []string {
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`{"type":"assistant","message":{"content":[{"type":"text","text":"%s step %d"}]}}`, job, i))
	}
	return lines
}

// checkAdoptedLogs: each adopted run's log holds, after its note that
// the Job was adopted, every line its pod printed, in order — those
// printed before the kill too: the adopting server reads the pod's log
// from its start.
func checkAdoptedLogs(t *testing.T, st *store.Store, acts []domain.Activation) {
	t.Helper()
	for _, a := range acts {
		evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + a.WorkerID}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		adopted := false
		for _, ev := range evs {
			switch {
			case ev.CausedBy != a.ID:
			case strings.HasPrefix(ev.Message.Body, "adopted Job "):
				adopted, got = true, nil
			case adopted && ev.Message.Subject == string(domain.LogAssistant):
				got = append(got, ev.Message.Body)
			}
		}
		var want []string
		for i := range 3 {
			want = append(want, fmt.Sprintf("%s step %d", kubernetes.JobName(a.ID), i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("activation %s's log after its adoption: %q, want the pod's lines %q", a.ID, got, want)
		}
	}
}

// adoptedNotes counts the activation logs' notes that a Job was adopted.
func adoptedNotes(t *testing.T, st *store.Store, ns string, workers int) int {
	t.Helper()
	var logs []string
	for i := range workers {
		logs = append(logs, domain.ActivationStreamPrefix+fmt.Sprintf("w-k%d", i))
	}
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: logs})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if strings.Contains(ev.Message.Body, "adopted Job "+ns+"/helix-org-a-") {
			n++
		}
	}
	return n
}
