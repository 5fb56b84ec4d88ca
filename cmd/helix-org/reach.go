package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// serverCheckTimeout bounds the look for a server: a running one answers
// in milliseconds, and a command that worked must not hang on a warning.
const serverCheckTimeout = time.Second

// warnNoServer warns on stderr when no helix-org server answers at base,
// the URL a command has just printed links to: a server started on
// another port (HELIX_ORG_ADDR) leaves the default pointing nowhere. A
// --url passed on purpose is not second-guessed: it may name a proxy or
// a server yet to start.
func warnNoServer(cmd *cobra.Command, base string) {
	if cmd.Flags().Changed("url") || serverAnswers(cmd.Context(), base) {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "warning: no helix-org server answers at %s, where the links above point: start one (helix-org serve), or if it listens elsewhere (HELIX_ORG_ADDR), point --url (or HELIX_ORG_URL) at it\n", base)
}

// serverAnswers reports whether a helix-org server answers at base: its
// /healthz says {"status":"ok"}, which another program on the port would not.
func serverAnswers(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, serverCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var health struct{ Status string }
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<10)).Decode(&health)
	return resp.StatusCode == http.StatusOK && err == nil && health.Status == "ok"
}
