// Command helix-org serves an organisation graph of humans and AI agents over MCP.
package main

import (
	"context"
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
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "helix-org:", err)
		os.Exit(1)
	}
}
