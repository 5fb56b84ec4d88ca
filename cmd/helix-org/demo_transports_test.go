package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func demoStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// demoRole reads a demo's role file, the content the README has you give
// create_role.
func demoRole(t *testing.T, demo string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "demos", demo, "role.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// demoPost sends one inbound request as a provider would.
func demoPost(t *testing.T, url string, body []byte, header map[string]string, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// demoEvents is every event on a stream.
func demoEvents(t *testing.T, st *store.Store, stream string) []domain.Event {
	t.Helper()
	evs, err := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{stream}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// demoWorkerLog is a worker's whole activation log as text.
func demoWorkerLog(t *testing.T, st *store.Store, worker string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range demoEvents(t, st, domain.ActivationStreamPrefix+worker) {
		b.WriteString(ev.Message.Body + "\n")
	}
	return b.String()
}

// demoActivations counts a worker's runs.
func demoActivations(t *testing.T, st *store.Store, worker string) int {
	t.Helper()
	acts, err := st.ListActivations(t.Context(), worker)
	if err != nil {
		t.Fatal(err)
	}
	return len(acts)
}

// demoLogBuffer collects what the server's goroutines log.
type demoLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed and replaced at each write (waitFor).
	wrote chan struct{}
}

func (s *demoLogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// waitFor waits until the log holds want, failing after d.
func (s *demoLogBuffer) waitFor(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		s.mu.Lock()
		got := s.b.String()
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		wrote := s.wrote
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-wrote:
		case <-deadline:
			t.Fatalf("log after %s:\n%s\nwant a line with\n%s", d, got, want)
		}
	}
}

func (s *demoLogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
