package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/kubernetes"
	"github.com/helixml/helix-org/agent/kubernetes/kubetest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kubetest.Stop()
	os.Exit(code)
}

// serverURL is where the pods would reach the server; nothing answers
// there: the simulated pods run no agent.
const serverURL = "http://helix-org.test.svc:8080"

// org seeds n AI workers, each following a stream of its own (s-k0…),
// on a store of the test's own.
func org(t *testing.T, n int) *store.Store {
	t.Helper()
	st := storetest.New(t)
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed the org: %v", err)
		}
	}
	must(st.Bootstrap(ctx, []string{"publish"}))
	must(st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-k", Title: "Clerk", Content: "Handle it."}))
	must(st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-k", RoleID: "r-k", Title: "Clerk"}))
	for i := range n {
		w, s := fmt.Sprintf("w-k%d", i), fmt.Sprintf("s-k%d", i)
		must(st.CreateStream(ctx, "w-owner", domain.Stream{ID: s, Name: s, Transport: domain.Transport{Kind: domain.TransportLocal}}))
		must(st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-k", Name: w}, nil))
		must(st.Subscribe(ctx, "w-owner", s, w))
	}
	for spec, v := range map[*domain.SettingSpec]string{&dispatch.MaxConcurrentSetting: "20", &dispatch.TimeoutSetting: "2m", &dispatch.StartBackoffSetting: "100ms"} {
		if err := st.SetSetting(ctx, *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func publish(t *testing.T, st *store.Store, stream, body string) {
	t.Helper()
	if _, err := st.Append(t.Context(), domain.Event{StreamID: stream, Source: "w-owner", Message: domain.Message{From: "w-owner", Body: body}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runtime is the kubernetes runtime on namespace ns of the test cluster.
func runtime(t *testing.T, c *kubetest.Cluster, ns string) *kubernetes.Runtime {
	t.Helper()
	client, err := new(kubernetes.Clients).For(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return &kubernetes.Runtime{Client: client, Namespace: ns, Org: "org-test", Command: strings.Fields(kubernetes.DefaultCommand), ServerURL: serverURL,
		Pod:       kubernetes.Pod{Image: "helix-org-agent:test", CPU: "250m", Memory: "128Mi"},
		Overrides: kubernetes.Overrides{Workers: map[string]kubernetes.Pod{"w-k1": {Memory: "512Mi"}}},
		LLM:       &agent.LLMConfig{Provider: "anthropic", Model: "claude-test", MaxTurns: 7, MaxTokens: 999}}
}

// dispatcher runs a dispatcher over st with rt until the test ends.
func dispatcher(t *testing.T, st *store.Store, rt domain.Runtime) *dispatch.Dispatcher {
	t.Helper()
	d := dispatch.New(st, rt, dispatch.Options{EnvsDir: t.TempDir(), MCPBaseURL: "http://127.0.0.1:1", Tick: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		sctx, stop := context.WithTimeout(context.Background(), time.Minute)
		defer stop()
		d.Shutdown(sctx)
	})
	return d
}

// until polls cond: what it waits on happens in other processes (the
// apiserver, the controllers).
func until(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// drained waits until no trigger is pending and nothing runs.
func drained(t *testing.T, st *store.Store) []domain.Activation {
	t.Helper()
	var acts []domain.Activation
	until(t, 3*time.Minute, "every trigger handled", func() bool {
		n, err := st.PendingTriggers(t.Context())
		if err != nil || n > 0 {
			return false
		}
		running, err := st.RunningActivations(t.Context())
		return err == nil && len(running) == 0
	})
	acts, err := st.ListActivations(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// seen is what the simulated kubelet found of each run's objects while
// its pod ran.
type seen struct {
	mu     sync.Mutex
	jobs   map[string]*batchv1.Job
	secret map[string]*corev1.Secret
	pods   map[string]int // by activation
}

func (s *seen) record(t *testing.T, c *kubetest.Cluster, pod *corev1.Pod) {
	ctx := context.Background()
	act := pod.Labels[kubernetes.LabelActivation]
	job, err := c.Client.Job(ctx, pod.Namespace, pod.Labels["job-name"])
	if err != nil {
		t.Errorf("the Job of pod %s: %v", pod.Name, err)
		return
	}
	sec, err := c.Client.Secret(ctx, pod.Namespace, job.Name)
	if err != nil {
		t.Errorf("the Secret of Job %s: %v", job.Name, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs[act], s.secret[act] = job, sec
	s.pods[act]++
}

func newSeen() *seen {
	return &seen{jobs: map[string]*batchv1.Job{}, secret: map[string]*corev1.Secret{}, pods: map[string]int{}}
}

// TestJobsForManyWorkers: 100 events to 20 AI workers run as Jobs, one
// per activation, each with the run's labels, deadline, resources (a
// worker's override applied), the built-in agent's settings as plain
// environment and the token and endpoints only in the mounted Secret;
// every trigger closes and no Job or Secret is left behind.
func TestJobsForManyWorkers(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "many")
	st := org(t, 20)
	rec := newSeen()
	c.Simulate(t, ns, func(p *corev1.Pod) kubetest.Life { rec.record(t, c, p); return kubetest.Life{} })
	dispatcher(t, st, runtime(t, c, ns))
	began := time.Now()
	for i := range 100 {
		publish(t, st, fmt.Sprintf("s-k%d", i%20), fmt.Sprint("job ", i))
	}
	acts := drained(t, st)
	took := time.Since(began)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	handled := 0
	for _, a := range acts {
		if a.Status != domain.ActivationSucceeded {
			t.Errorf("activation %s of %s: %s (%s), want succeeded", a.ID, a.WorkerID, a.Status, a.Error)
		}
		if rec.pods[a.ID] != 1 {
			t.Errorf("activation %s ran %d pods, want 1", a.ID, rec.pods[a.ID])
		}
		trigs, err := st.ActivationTriggers(t.Context(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trigs {
			if strings.HasPrefix(tr.Event.StreamID, "s-k") { // not the hire
				handled++
			}
		}
		if job := rec.jobs[a.ID]; job != nil {
			checkJob(t, job, rec.secret[a.ID], a)
		}
	}
	if handled != 100 || len(rec.jobs) != len(acts) {
		t.Errorf("%d triggers handled in %d Jobs for %d activations, want 100 in one Job each", handled, len(rec.jobs), len(acts))
	}
	until(t, time.Minute, "the Jobs and Secrets deleted", func() bool {
		jobs, err1 := c.Client.Jobs(t.Context(), ns)
		secrets, err2 := c.Client.Secrets(t.Context(), ns, kubernetes.LabelManagedBy+"="+kubernetes.ManagedBy)
		return err1 == nil && err2 == nil && len(jobs.Items) == 0 && len(secrets.Items) == 0
	})
	t.Logf("100 events to 20 workers: %d activations, %d Jobs, all handled in %s", len(acts), len(rec.jobs), took.Round(time.Millisecond))
}

// checkJob checks one run's Job and Secret as the cluster stored them.
func checkJob(t *testing.T, job *batchv1.Job, secret *corev1.Secret, a domain.Activation) {
	t.Helper()
	if job.Name != kubernetes.JobName(a.ID) {
		t.Errorf("Job %s for activation %s, want %s", job.Name, a.ID, kubernetes.JobName(a.ID))
	}
	want := map[string]string{kubernetes.LabelManagedBy: "helix-org", kubernetes.LabelOrg: "org-test", kubernetes.LabelWorker: a.WorkerID, kubernetes.LabelActivation: a.ID}
	for k, v := range want {
		if job.Labels[k] != v || job.Spec.Template.Labels[k] != v || secret.Labels[k] != v {
			t.Errorf("Job %s: label %s = %q (pod %q, secret %q), want %q", job.Name, k, job.Labels[k], job.Spec.Template.Labels[k], secret.Labels[k], v)
		}
	}
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 120 {
		t.Errorf("Job %s: activeDeadlineSeconds %v, want 120 (dispatch.timeout 2m)", job.Name, d)
	}
	if b := job.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("Job %s: backoffLimit %v, want 0 (retries are the dispatcher's)", job.Name, b)
	}
	ctr := job.Spec.Template.Spec.Containers[0]
	mem := "128Mi"
	if a.WorkerID == "w-k1" {
		mem = "512Mi" // the worker's override
	}
	for _, rl := range []corev1.ResourceList{ctr.Resources.Requests, ctr.Resources.Limits} {
		if cpu, m := rl[corev1.ResourceCPU], rl[corev1.ResourceMemory]; cpu.String() != "250m" || m.String() != mem {
			t.Errorf("Job %s: cpu %s memory %s, want 250m and %s", job.Name, cpu.String(), m.String(), mem)
		}
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	for k, v := range map[string]string{"HELIX_ORG_WORKER": a.WorkerID, "HELIX_ORG_ACTIVATION": a.ID, "HELIX_ORG_LLM_MODEL": "claude-test",
		"HELIX_ORG_LLM_MAX_TURNS": "7", "HELIX_ORG_LLM_PROVIDER": "anthropic"} {
		if env[k] != v {
			t.Errorf("Job %s: env %s = %q, want %q", job.Name, k, env[k], v)
		}
	}
	tok := string(secret.Data[domain.TokenEnv])
	if !strings.HasPrefix(tok, "hx") {
		t.Errorf("Job %s: the Secret's %s is %q, want the run's token", job.Name, domain.TokenEnv, tok)
	}
	for _, e := range ctr.Env {
		if strings.Contains(e.Value, tok) || strings.Contains(e.Value, serverURL) {
			t.Errorf("Job %s: env %s holds the token or the server's address; they belong in the Secret", job.Name, e.Name)
		}
	}
	for k, v := range map[string]string{domain.MCPURLEnv: domain.MCPURL(serverURL, a.WorkerID), agent.EnvLLMAPIKey: tok,
		agent.EnvLLMBaseURL: domain.RelayURL(serverURL, "anthropic")} {
		if got := string(secret.Data[k]); got != v {
			t.Errorf("Job %s: Secret %s = %q, want %q", job.Name, k, got, v)
		}
	}
	for _, f := range []string{kubernetes.PromptFile, "role.md", "mcp.json"} {
		if len(secret.Data[f]) == 0 {
			t.Errorf("Job %s: the Secret has no %s", job.Name, f)
		}
	}
	vols := job.Spec.Template.Spec.Volumes
	if !slices.ContainsFunc(vols, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == job.Name }) ||
		!slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == kubernetes.MountPath && m.ReadOnly }) {
		t.Errorf("Job %s: the Secret is not mounted read-only at %s: %+v %+v", job.Name, kubernetes.MountPath, vols, ctr.VolumeMounts)
	}
	if !slices.Equal(ctr.Command, strings.Fields(kubernetes.DefaultCommand)) {
		t.Errorf("Job %s: command %q, want %q", job.Name, ctr.Command, kubernetes.DefaultCommand)
	}
}

// TestJobOutcomes: a Job that completes closes its triggers; one whose
// pod exits non-zero fails its run and closes them; one deleted from
// outside while it runs is a killed agent, and its triggers run again
// in a new Job.
func TestJobOutcomes(t *testing.T) {
	c := kubetest.Shared(t)
	tests := []struct {
		name       string
		exit       int32
		deleteJob  bool
		wantStatus []domain.ActivationStatus // the worker's runs, in order
		wantError  string
	}{
		{name: "complete", wantStatus: []domain.ActivationStatus{domain.ActivationSucceeded}},
		{name: "fail", exit: 3, wantStatus: []domain.ActivationStatus{domain.ActivationFailed}, wantError: "exited with status 3"},
		{name: "deleted", deleteJob: true, wantStatus: []domain.ActivationStatus{domain.ActivationFailed, domain.ActivationSucceeded}, wantError: "killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := c.Namespace(t, "outcome-"+tt.name)
			st := org(t, 1)
			var mu sync.Mutex
			pods := 0
			c.Simulate(t, ns, func(p *corev1.Pod) kubetest.Life {
				mu.Lock()
				defer mu.Unlock()
				pods++
				if tt.deleteJob && pods == 1 {
					go c.Client.DeleteJob(context.Background(), ns, p.Labels["job-name"])
					return kubetest.Life{Hold: true, Release: make(chan struct{})}
				}
				return kubetest.Life{Exit: tt.exit}
			})
			// Stored before the dispatcher starts: the last run handles
			// the hire and the message together on a busy machine too.
			publish(t, st, "s-k0", "hello")
			dispatcher(t, st, runtime(t, c, ns))
			acts := drained(t, st)
			var got []domain.ActivationStatus
			for _, a := range acts {
				got = append(got, a.Status)
			}
			if !slices.Equal(got, tt.wantStatus) {
				t.Fatalf("runs %v, want %v", got, tt.wantStatus)
			}
			if tt.wantError != "" && !strings.Contains(acts[0].Error, tt.wantError) {
				t.Errorf("first run's error %q, want it to say %q", acts[0].Error, tt.wantError)
			}
			trigs, err := st.ActivationTriggers(t.Context(), acts[len(acts)-1].ID)
			if err != nil || len(trigs) != 2 {
				t.Errorf("the last run handled %d triggers (%v), want the hire and the message", len(trigs), err)
			}
		})
	}
}

// TestCancelDeletesTheJob: cancel_activation's store call ends the run,
// and the dispatcher running it deletes its Job and Secret.
func TestCancelDeletesTheJob(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "cancel")
	st := org(t, 1)
	c.Simulate(t, ns, func(*corev1.Pod) kubetest.Life { return kubetest.Life{Hold: true, Release: t.Context().Done()} })
	dispatcher(t, st, runtime(t, c, ns))
	publish(t, st, "s-k0", "hello")
	var act domain.Activation
	until(t, time.Minute, "a running activation with its Job", func() bool {
		running, err := st.RunningActivations(t.Context())
		if err != nil || len(running) != 1 || running[0].Process == nil {
			return false
		}
		act = running[0]
		_, err = c.Client.Job(t.Context(), ns, kubernetes.JobName(act.ID))
		return err == nil
	})
	if _, err := dispatch.CancelActivation(t.Context(), st, act.ID, "", true); err != nil {
		t.Fatal(err)
	}
	until(t, time.Minute, "the Job and its Secret deleted", func() bool {
		_, err1 := c.Client.Job(t.Context(), ns, kubernetes.JobName(act.ID))
		_, err2 := c.Client.Secret(t.Context(), ns, kubernetes.JobName(act.ID))
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
	})
	got, err := st.GetActivation(t.Context(), act.ID)
	if err != nil || got.Status != domain.ActivationCancelled {
		t.Errorf("activation %s: %s (%v), want cancelled", act.ID, got.Status, err)
	}
}
