package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// chaosAgent is a tiny shell agent: it notes the events of its prompt as
// started, works a moment, and notes them as done, in ../chaos.log (the
// envs dir).
const chaosAgent = `ids=$(sed -n 's/^\[[0-9]*\/[0-9]*\] event \([^ ]*\) .*/\1/p' | tr '\n' ,)
echo "start $HELIX_ORG_ACTIVATION $ids" >> ../chaos.log
sleep 0.05
echo "done $HELIX_ORG_ACTIVATION $ids" >> ../chaos.log`

const (
	chaosWorkers     = 4
	chaosActivations = 200
	chaosLease       = time.Second
)

// chaosOrg writes an org of chaosWorkers AI workers, each following its
// own stream, with the chaos agent (which shares envs, for its log), a
// short lease and fast retries, and returns the owner's token.
func chaosOrg(t *testing.T, db, envs string) string {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Bootstrap(ctx, tools.Names())
	st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-chaos", Title: "Chaos", Content: "Handle it."})
	st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-chaos", RoleID: "r-chaos", Title: "Chaos"})
	for i := range chaosWorkers {
		w, s := fmt.Sprintf("w-c%d", i), fmt.Sprintf("s-c%d", i)
		st.CreateStream(ctx, "w-owner", domain.Stream{ID: s, Name: s, Transport: domain.Transport{Kind: domain.TransportLocal}})
		if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: w, Kind: domain.WorkerAI, PositionID: "p-chaos", Name: w}, nil); err != nil {
			t.Fatal(err)
		}
		st.Subscribe(ctx, "w-owner", s, w)
	}
	for spec, v := range map[*domain.SettingSpec]string{
		&agent.RuntimeSetting: agent.RuntimeCommand, &agent.CommandSetting: chaosAgent,
		&dispatch.LeaseSetting: chaosLease.String(), &dispatch.MaxConcurrentSetting: fmt.Sprint(chaosWorkers),
		&dispatch.StartBackoffSetting: "20ms", &dispatch.StartBackoffMaxSetting: "100ms", &dispatch.MaxStartAttemptsSetting: "100",
	} {
		if err := st.SetSetting(ctx, *spec, v); err != nil {
			t.Fatal(err)
		}
	}
	shareWithAgents(t, st, envs)
	return servertest.Token(t, st, "w-owner")
}

// chaosLog reads ../chaos.log: for each event, the activations that
// finished it (wrote "done").
func chaosLog(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		if len(parts) < 3 || parts[0] != "done" {
			continue
		}
		for _, id := range strings.Split(strings.TrimSuffix(parts[2], ","), ",") {
			done[id] = append(done[id], parts[1])
		}
	}
	return done
}

// TestChaosNoActivationLeftRunningNoTriggerLost runs at least 200
// activations of the real binary while killing (SIGKILL) agent processes
// at random and the server itself three times; afterwards nothing is left
// running past two lease periods and every event was handled at least
// once (duplicates, the price of at-least-once, are counted).
func TestChaosNoActivationLeftRunningNoTriggerLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	os.MkdirAll(envs, 0o700)
	tok := chaosOrg(t, db, envs)
	srv := startBinary(t, db, envs, addr)
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dial := func() *mcp.ClientSession {
		cs, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	owner := dial()
	rng := rand.New(rand.NewPCG(1, 2))
	var published []string
	agentKills, serverKills := 0, 0
	began := time.Now()
	for acts := 0; acts < chaosActivations; {
		ev := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": fmt.Sprintf("s-c%d", len(published)%chaosWorkers), "body": fmt.Sprint("job ", len(published))})
		published = append(published, ev.ID)
		all, err := st.ListActivations(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		acts = len(all)
		switch {
		case serverKills < 3 && acts >= (serverKills+1)*chaosActivations/4:
			srv.Process.Signal(syscall.SIGKILL)
			srv.Wait()
			serverKills++
			srv = startBinary(t, db, envs, addr)
			owner = dial()
		case rng.IntN(4) == 0:
			for _, a := range all {
				if a.Status == domain.ActivationRunning && a.Process != nil && syscall.Kill(a.Process.PGID, syscall.SIGKILL) == nil {
					agentKills++
					break
				}
			}
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // a random moment for the next blow
	}
	chaosEnd := time.Now()
	until(t, 60*time.Second, "every trigger handled", func() bool {
		n, err := st.PendingTriggers(t.Context())
		return err == nil && n == 0
	})
	settled := time.Since(chaosEnd)

	all, err := st.ListActivations(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	byStatus := map[domain.ActivationStatus]int{}
	for _, a := range all {
		byStatus[a.Status]++
		if a.Status == domain.ActivationRunning {
			t.Errorf("activation %s still running after the queue drained", a.ID)
		}
	}
	if settled > 2*chaosLease+5*time.Second {
		t.Logf("note: the queue took %s to drain after the chaos", settled)
	}
	parked, _ := st.ListTriggers(t.Context(), store.TriggerQuery{Statuses: []domain.TriggerStatus{domain.TriggerParked}})
	if len(parked) > 0 {
		t.Errorf("parked triggers after the chaos: %+v", parked)
	}
	done := chaosLog(t, filepath.Join(envs, "chaos.log"))
	dups := 0
	for _, id := range published {
		switch n := len(done[id]); {
		case n == 0:
			t.Errorf("event %s was never handled", id)
		case n > 1:
			dups += n - 1
		}
	}
	t.Logf("%d activations (%v) for %d events in %s; killed %d agents and the server %d times; drained %s after; %d duplicate deliveries",
		len(all), byStatus, len(published), chaosEnd.Sub(began).Round(time.Millisecond), agentKills, serverKills, settled.Round(time.Millisecond), dups)
}
