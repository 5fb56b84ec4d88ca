package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// acked records the writes the server acknowledged, and SIGKILLs it once
// their number reaches killAt.
type acked struct {
	mu      sync.Mutex
	events  []string // published event ids
	hooks   []string // webhook bodies answered 200
	killAt  int
	kill    func()
	stopped bool
}

func (a *acked) add(list *[]string, v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*list = append(*list, v)
	if !a.stopped && len(a.events)+len(a.hooks) >= a.killAt {
		a.stopped = true
		a.kill()
	}
}

// TestGroupCommitAcrossSIGKILL: MCP clients publish and senders post
// signed webhooks to the real binary all at once, so writes commit in
// batches; the server is SIGKILLed at a random point of that load, three
// times over. After the restarts every write it acknowledged is stored:
// each published event by its id, each webhook exactly once.
func TestGroupCommitAcrossSIGKILL(t *testing.T) {
	const rounds, publishers, senders = 3, 4, 4
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	ctx := t.Context()
	st, err := store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	st.Bootstrap(ctx, tools.Names())
	for _, s := range []domain.Stream{
		{ID: "s-pub", Name: "pub", Transport: domain.Transport{Kind: domain.TransportLocal}},
		{ID: "s-hook", Name: "hook", Transport: domain.Transport{Kind: webhook.Kind, Config: []byte(`{"secret":"` + hookSecret + `"}`)}},
	} {
		if _, err := st.CreateStream(ctx, "w-owner", s); err != nil {
			t.Fatal(err)
		}
	}
	tok := servertest.Token(t, st, "w-owner")
	st.Close()

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	a := &acked{}
	for round := range rounds {
		srv := startBinary(t, db, envs, addr)
		load, stop := context.WithTimeout(ctx, time.Minute)
		a.mu.Lock()
		a.killAt = len(a.events) + len(a.hooks) + 20 + rng.IntN(200)
		a.stopped = false
		a.kill = func() { srv.Process.Signal(syscall.SIGKILL); stop() }
		a.mu.Unlock()
		var wg sync.WaitGroup
		for p := range publishers {
			cs, err := servertest.Dial(t, "http://"+addr+"/workers/w-owner/mcp", tok)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := 0; load.Err() == nil; i++ {
					if id, ok := publish(load, cs, fmt.Sprintf("round %d publisher %d call %d", round, p, i)); ok {
						a.add(&a.events, id)
					}
				}
			})
		}
		for s := range senders {
			wg.Go(func() {
				for i := 0; load.Err() == nil; i++ {
					body := fmt.Sprintf(`{"round":%d,"sender":%d,"n":%d}`, round, s, i)
					if postHook(load, "http://"+addr, fmt.Sprintf("msg_%d_%d_%d", round, s, i), body) {
						a.add(&a.hooks, body)
					}
				}
			})
		}
		wg.Wait()
		stop()
		if !a.stopped {
			t.Fatalf("round %d: the load never reached %d acknowledged writes", round, a.killAt)
		}
		srv.Wait()
	}
	t.Logf("%d publishes and %d webhooks acknowledged over %d SIGKILLs", len(a.events), len(a.hooks), rounds)

	st, err = store.Open(ctx, db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range a.events {
		if ev, err := st.GetEvent(ctx, id); err != nil || ev.StreamID != "s-pub" {
			t.Errorf("acknowledged event %s: %v (stream %q)", id, err, ev.StreamID)
		}
	}
	stored := map[string]int{}
	for since := int64(0); ; {
		evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{"s-hook"}, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			stored[ev.Message.Body]++
		}
		since = evs[len(evs)-1].Seq
	}
	for _, body := range a.hooks {
		if n := stored[body]; n != 1 {
			t.Errorf("acknowledged webhook %s stored %d times, want 1", body, n)
		}
	}
}

// publish reports the event id when the server acknowledged the publish.
func publish(ctx context.Context, cs *mcp.ClientSession, body string) (string, bool) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-pub", "body": body}})
	if err != nil || res.IsError {
		return "", false
	}
	var ev domain.Event
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &ev) != nil || ev.ID == "" {
		return "", false
	}
	return ev.ID, true
}

// postHook reports whether the server answered a signed webhook with 200.
func postHook(ctx context.Context, base, id, body string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/webhooks/s-hook", strings.NewReader(body))
	req.Header = webhooktest.Sign(hookSecret, id, time.Now(), []byte(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
