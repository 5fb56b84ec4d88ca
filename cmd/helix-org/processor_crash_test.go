package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// TestProcessorAcrossSIGKILL: the real binary works through a backlog of
// events a processor has to handle and is SIGKILLed part way, twice; a
// kill lands while outputs are still to be written (some processed, some
// pending). After the last restart every input has exactly one output:
// nothing lost, nothing doubled.
func TestProcessorAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	const inputs, rounds = 2000, 2
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Bootstrap(ctx, tools.Names()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-in", Name: "in", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateProcessor(ctx, "w-owner", domain.Processor{ID: "proc-copy", Input: "s-in", Kind: "template",
		Config: []byte(`{"subject":"copy of {{.message.subject}}"}`), Outputs: []string{"s-out"}}); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for i := range inputs {
		ev, err := st.Append(ctx, domain.Event{StreamID: "s-in", Source: "w-owner", Message: domain.Message{Subject: fmt.Sprint(i), Body: "b"}}, store.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[ev.ID] = true
	}
	progress := func() domain.Processor {
		p, err := st.GetProcessor(ctx, "proc-copy")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 31))
	for round := range rounds {
		before := progress().Processed
		killAt := before + 50 + int64(rng.IntN(400))
		srv := startBinary(t, db, envs, addr)
		until(t, time.Minute, fmt.Sprintf("round %d: %d processed", round, killAt), func() bool { return progress().Processed >= killAt })
		srv.Process.Signal(syscall.SIGKILL)
		srv.Wait()
		p := progress()
		if p.Pending == 0 || p.Processed+p.Pending != inputs {
			t.Fatalf("round %d: after the kill %d processed and %d pending of %d; want the kill part way and every input accounted for", round, p.Processed, p.Pending, inputs)
		}
		t.Logf("round %d: killed with %d processed, %d pending", round, p.Processed, p.Pending)
	}
	startBinary(t, db, envs, addr)
	until(t, 2*time.Minute, "every input processed", func() bool { return progress().Pending == 0 })

	got := map[string]int{}
	var since int64
	for {
		evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-out"}, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			got[ev.CausedBy]++
		}
		since = evs[len(evs)-1].Seq
	}
	for id := range ids {
		if got[id] != 1 {
			t.Errorf("input %s has %d outputs; want 1", id, got[id])
		}
	}
	if p := progress(); len(got) != inputs || p.Processed != inputs || p.Failed != 0 {
		t.Errorf("%d inputs with outputs, processor %+v; want %d processed, none failed", len(got), p, inputs)
	}
}
