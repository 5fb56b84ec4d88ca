package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// startServer serves a fresh bootstrapped database on 127.0.0.1 with the
// production store defaults, and returns the owner's MCP URL and a token.
func startServer(ctx context.Context) (url, token string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "helix-org-load-")
	if err != nil {
		return "", "", nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "helix-org.db"), store.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return "", "", nil, err
	}
	cleanup := func() { st.Close(); os.RemoveAll(dir) }
	w, err := st.Bootstrap(ctx, tools.Names())
	if err == nil {
		token, err = st.CreateToken(ctx, store.TokenSpec{WorkerID: w.ID, Kind: store.TokenOperator})
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		cleanup()
		return "", "", nil, err
	}
	hs := &http.Server{Handler: server.New(st, server.Config{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "helix-org-load: serve:", err)
		}
	}()
	stop = func() {
		hs.Shutdown(context.Background())
		<-done
		cleanup()
	}
	return domain.MCPURL("http://"+ln.Addr().String(), w.ID), token, stop, nil
}
