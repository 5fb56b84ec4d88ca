package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestWarmGate: what waits for a server's first answer starts once that
// answer has reached the client, or after the gate's wait when no
// request comes; it starts once either way.
func TestWarmGate(t *testing.T) {
	t.Run("first answer", func(t *testing.T) {
		release, opens := make(chan struct{}), make(chan struct{}, 2)
		g := newWarmGate(time.Hour, func() { opens <- struct{}{}; <-release })
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "answer")
		}))
		srv.Config.ConnState = g.connState
		srv.Start()
		defer srv.Close()
		defer close(release)
		select {
		case <-g.opened:
			t.Fatal("the gate opened before any request")
		default:
		}
		// onOpen holds the connection's goroutine: the client has its
		// answer only if it left whole before the gate opened.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if body := get(ctx, t, srv.URL); body != "answer" {
			t.Fatalf("first answer %q, want %q", body, "answer")
		}
		<-opens
		<-g.opened
		release <- struct{}{}
		if body := get(ctx, t, srv.URL); body != "answer" {
			t.Fatalf("second answer %q, want %q", body, "answer")
		}
		select {
		case <-opens:
			t.Fatal("the gate opened twice")
		default:
		}
	})
	t.Run("no request", func(t *testing.T) {
		opened := make(chan struct{})
		g := newWarmGate(10*time.Millisecond, func() { close(opened) })
		g.start()
		<-opened
		<-g.opened
		g.open() // later opens do nothing (a second close would panic)
	})
	t.Run("no gate", func(t *testing.T) {
		orgServe{}.whenWarm(t.Context()) // returns at once
	})
}

func get(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the answer did not arrive: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
