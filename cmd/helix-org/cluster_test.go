package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

const (
	clusterWorkers = 100
	// clusterLease is short so that the survivor takes over quickly.
	clusterLease = 3 * time.Second
	// clusterClients publish through each server at once.
	clusterClients = 4
	// clusterPatience bounds each wait of the cluster test: it is there
	// for a hang, not for speed.
	clusterPatience = 10 * time.Minute
)

// clusterEvents is how many events the cluster test publishes: 1,000 in
// make test (about a minute under -race on two cores: enough that runs
// are in flight on both servers at the kill), HELIX_ORG_CLUSTER_EVENTS
// otherwise — make cluster runs the 10,000, about 4.5 minutes.
func clusterEvents(t *testing.T) int {
	v := os.Getenv("HELIX_ORG_CLUSTER_EVENTS")
	if v == "" {
		return 1000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < clusterWorkers {
		t.Fatalf("HELIX_ORG_CLUSTER_EVENTS=%q: want a number of events, at least %d", v, clusterWorkers)
	}
	return n
}

// clusterAgent reads its prompt and works a moment: long enough that a
// killed server leaves runs cut off, short enough that the workers keep
// up, their bursts coalesced into few runs.
const clusterAgent = `cat >/dev/null; sleep 0.1`

// clusterOrg writes an org of clusterWorkers AI workers, each following
// its own stream, with the cluster agent and a short lease, and returns
// the owner's token.
func clusterOrg(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := t.Context()
	steps := []func() error{
		func() error { _, err := st.Bootstrap(ctx, tools.Names()); return err },
		func() error {
			_, err := st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-c", Title: "Clerk", Content: "Handle it."})
			return err
		},
		func() error {
			_, err := st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-c", RoleID: "r-c", Title: "Clerk"})
			return err
		},
	}
	for i := range clusterWorkers {
		w, s := fmt.Sprintf("w-c%d", i), fmt.Sprintf("s-c%d", i)
		steps = append(steps,
			func() error {
				_, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: s, Name: s, Transport: domain.Transport{Kind: domain.TransportLocal}})
				return err
			},
			func() error {
				_, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-c", Name: w}, nil)
				return err
			},
			func() error { _, err := st.Subscribe(ctx, "w-owner", s, w); return err })
	}
	for spec, v := range map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeCommand, &agent.CommandSetting: clusterAgent,
		&dispatch.LeaseSetting: clusterLease.String(), &dispatch.MaxConcurrentSetting: "4",
	} {
		steps = append(steps, func() error { return st.SetSetting(ctx, *spec, v) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("seed the org: %v", err)
		}
	}
	return servertest.Token(t, st, "w-owner")
}

// clusterServer is one `helix-org serve` of the cluster.
type clusterServer struct {
	cmd  *exec.Cmd
	addr string
}

// startClusterServer runs `helix-org serve` on the database with its own
// envs dir under dir, its log in dir/serve.log (printed when the test
// fails), and waits until it answers.
func startClusterServer(t *testing.T, url, key, dir string) clusterServer {
	t.Helper()
	envs := filepath.Join(dir, "envs")
	if err := os.MkdirAll(envs, 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "serve", "--addr", addr, "--db", url, "--key-file", key, "--envs-dir", envs, "--shutdown-grace", "5s")
	cmd.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("log of the server on %s (last 4 KB):\n%s", addr, out[max(0, len(out)-4096):])
		}
	})
	waitHealthy(t, addr)
	return clusterServer{cmd: cmd, addr: addr}
}

// publishThrough publishes the events taken from jobs through the server
// at addr with clusterClients MCP clients at once, until jobs is drained
// or stop is closed. It returns the count published so far and a wait for
// the clients to return.
func publishThrough(t *testing.T, addr, tok string, jobs <-chan int, stop <-chan struct{}) (*atomic.Int64, func()) {
	t.Helper()
	var n atomic.Int64
	var wg sync.WaitGroup
	for range clusterClients {
		cs, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i, ok := <-jobs
				if !ok {
					return
				}
				args := map[string]any{"stream": fmt.Sprintf("s-c%d", i%clusterWorkers), "body": fmt.Sprint("job ", i)}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "publish", Arguments: args})
				if err != nil || res.IsError {
					t.Errorf("publish %d through %s: %v %v", i, addr, err, res)
					return
				}
				n.Add(1)
			}
		})
	}
	t.Cleanup(wg.Wait)
	return &n, wg.Wait
}

// parentOf is a process's parent, from /proc; 0 once it is gone.
func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command may hold spaces: the fields after it follow its last ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// TestClusterTwoServersOneDatabase: two `helix-org serve` on one
// PostgreSQL database behave as one server. 10,000 events are published
// to 100 AI workers through both at once; each (event, worker) pair
// reaches exactly one run, no worker ever runs twice at once, and after
// one server is killed (SIGKILL) mid-run the survivor takes its runs over
// within two lease periods and every trigger completes — at least once,
// the duplicates counted.
func TestClusterTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "org.key")
	st, err := store.Open(t.Context(), url, store.Options{KeyFile: key, Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok := clusterOrg(t, st)
	events := clusterEvents(t)
	// killAt events are published through both servers before one is
	// killed; the rest go through the survivor.
	killAt := int64(events * 6 / 10)
	var servers [2]clusterServer
	for i := range servers {
		servers[i] = startClusterServer(t, url, key, filepath.Join(dir, fmt.Sprint("server", i)))
	}
	victim, survivor := servers[0], servers[1]

	began := time.Now()
	jobs := make(chan int, events)
	for i := range events {
		jobs <- i
	}
	close(jobs)
	stopVictim := make(chan struct{})
	viaVictim, victimDone := publishThrough(t, victim.addr, tok, jobs, stopVictim)
	viaSurvivor, _ := publishThrough(t, survivor.addr, tok, jobs, nil)
	until(t, clusterPatience, fmt.Sprintf("%d events published", killAt), func() bool {
		return viaVictim.Load()+viaSurvivor.Load() >= killAt
	})
	close(stopVictim)
	victimDone() // no publish is in flight through it when it dies

	// Kill the victim while it runs agents; its runs must be taken over.
	var cutOff []string
	until(t, time.Minute, "a run on the server to kill", func() bool {
		running, err := st.RunningActivations(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		cutOff = cutOff[:0]
		for _, a := range running {
			if a.Process != nil && parentOf(a.Process.PGID) == victim.cmd.Process.Pid {
				cutOff = append(cutOff, a.ID)
			}
		}
		return len(cutOff) > 0
	})
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()
	killed := time.Now()
	publishedAtKill := viaVictim.Load() + viaSurvivor.Load()

	until(t, clusterPatience, "every event published", func() bool { return viaVictim.Load()+viaSurvivor.Load() == int64(events) })
	published := time.Since(began)
	until(t, clusterPatience, "every trigger handled", func() bool {
		n, err := st.PendingTriggers(t.Context())
		return err == nil && n == 0
	})
	drained := time.Since(began)

	acts, err := st.ListActivations(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	checkClusterRuns(t, st, acts, events, cutOff, killed)
	t.Logf("%d events (%d through the killed server, %d published when it was killed) to %d workers: published in %s, all handled in %s, %d runs",
		events, viaVictim.Load(), publishedAtKill, clusterWorkers, published.Round(time.Millisecond), drained.Round(time.Millisecond), len(acts))
}

// checkClusterRuns checks the runs against the triggers: each trigger
// done, in exactly one successful run and in no more runs than one
// taken over; no worker's runs overlap; the runs cut off by the kill
// taken over within two lease periods.
func checkClusterRuns(t *testing.T, st *store.Store, acts []domain.Activation, wantEvents int, cutOff []string, killed time.Time) {
	t.Helper()
	runsOf := map[int64][]domain.Activation{}
	byWorker := map[string][]domain.Activation{}
	statuses := map[domain.ActivationStatus]int{}
	for _, a := range acts {
		statuses[a.Status]++
		byWorker[a.WorkerID] = append(byWorker[a.WorkerID], a)
		for _, id := range a.TriggerIDs {
			runsOf[id] = append(runsOf[id], a)
		}
	}
	trigs, err := st.ListTriggers(t.Context(), store.TriggerQuery{})
	if err != nil {
		t.Fatal(err)
	}
	events, dups := 0, 0
	for _, tr := range trigs {
		if tr.Kind == domain.TriggerEvent {
			events++
		}
		if tr.Status != domain.TriggerDone {
			t.Errorf("trigger %d is %s, want done", tr.ID, tr.Status)
		}
		runs := runsOf[tr.ID]
		ok := 0
		for _, a := range runs {
			if a.Status == domain.ActivationSucceeded {
				ok++
			}
		}
		if ok != 1 {
			t.Errorf("trigger %d (event %s, %s) reached %d successful runs of %d, want 1", tr.ID, tr.EventID, tr.WorkerID, ok, len(runs))
		}
		dups += len(runs) - 1
	}
	if events != wantEvents {
		t.Errorf("%d event triggers, want one per event: %d", events, wantEvents)
	}
	for w, runs := range byWorker {
		for i := 1; i < len(runs); i++ {
			prev := runs[i-1]
			if prev.FinishedAt == nil || runs[i].StartedAt.Before(*prev.FinishedAt) {
				t.Errorf("%s: run %s started at %s while %s ran (ended %v)", w, runs[i].ID, runs[i].StartedAt, prev.ID, prev.FinishedAt)
			}
		}
	}
	for _, id := range cutOff {
		i := slices.IndexFunc(acts, func(a domain.Activation) bool { return a.ID == id })
		if a := acts[i]; !takenOver(a) {
			t.Errorf("run %s of the killed server is %s (%s), want failed and taken over", a.ID, a.Status, a.Error)
		}
	}
	var slowest time.Duration
	n := 0
	for _, a := range acts {
		if takenOver(a) {
			n++
			slowest = max(slowest, a.FinishedAt.Sub(killed))
		}
	}
	if slowest > 2*clusterLease {
		t.Errorf("the survivor took over the killed server's runs %s after the kill, want within two leases (%s)", slowest, 2*clusterLease)
	}
	t.Logf("runs by status %v; %d runs taken over (%d seen running at the kill) within %s of it; %d duplicate deliveries (triggers run again after a takeover)",
		statuses, n, len(cutOff), slowest.Round(time.Millisecond), dups)
}

// takenOver reports whether a run was ended by another server's reaper.
func takenOver(a domain.Activation) bool {
	return a.Status == domain.ActivationFailed && a.FinishedAt != nil && (a.Error == "lease lapsed" || a.Error == "agent process died")
}
