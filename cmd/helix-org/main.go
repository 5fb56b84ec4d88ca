// Command helix-org serves an organisation graph of humans and AI agents over MCP.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/helixml/helix-org/tools"
)

func main() {
	// Once, before anything serves: servers read it on every call.
	tools.Version = version
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Asked for, SIGPIPE no longer kills the process when stdout's reader
	// goes (| head): the write fails with EPIPE, and deferred work, such as
	// revoking the token call minted, still runs.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if err := newRootCmd().ExecuteContext(ctx); err != nil && !stdoutClosed(err) {
		fmt.Fprintln(os.Stderr, "helix-org:", err)
		os.Exit(1)
	}
}

// stdoutClosed reports whether err is a write to a stdout whose reader
// has gone: an end, as for any Unix filter, not a failure to report.
func stdoutClosed(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}
