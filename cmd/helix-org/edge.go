package main

import (
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/transports/inbound"
)

// edgeConfig bounds the HTTP edge: how long a connection may take over
// each part of a request, how long an idle keep-alive is kept, and how
// many bytes of unauthenticated request bodies are held at once. The
// timeouts are sized for strangers (inbound webhooks, scanners); an
// authenticated MCP call gets CallTimeout instead, so long-polls and skill
// builds are not cut off.
type edgeConfig struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	CallTimeout       time.Duration
	InboundBudget     int64
}

// Defaults of the edge flags; a zero field (a test's serveConfig{}) gets
// them too.
var edgeDefaults = edgeConfig{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       time.Minute,
	WriteTimeout:      time.Minute,
	IdleTimeout:       time.Minute,
	CallTimeout:       server.DefaultCallTimeout,
	InboundBudget:     inbound.DefaultBudget,
}

func (c *edgeConfig) bind(fs *pflag.FlagSet) {
	d := edgeDefaults
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", d.ReadHeaderTimeout, "longest a client may take to send a request's headers")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", d.ReadTimeout, "longest a client may take to send a whole request, body included (authenticated calls: --call-timeout)")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", d.WriteTimeout, "longest from a request's headers to the end of its answer (authenticated calls: --call-timeout)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", d.IdleTimeout, "how long an idle keep-alive connection is kept open")
	fs.DurationVar(&c.CallTimeout, "call-timeout", d.CallTimeout, "longest an authenticated MCP call may run and send its answer (long-polls, skill builds)")
	fs.Int64Var(&c.InboundBudget, "inbound-budget", d.InboundBudget, "bytes of unauthenticated request bodies (webhooks, email, GitHub) held at once; past it requests get 503 with Retry-After")
}

// withDefaults fills every unset field from edgeDefaults.
func (c edgeConfig) withDefaults() edgeConfig {
	pick := func(v, def time.Duration) time.Duration {
		if v <= 0 {
			return def
		}
		return v
	}
	d := edgeDefaults
	c.ReadHeaderTimeout = pick(c.ReadHeaderTimeout, d.ReadHeaderTimeout)
	c.ReadTimeout = pick(c.ReadTimeout, d.ReadTimeout)
	c.WriteTimeout = pick(c.WriteTimeout, d.WriteTimeout)
	c.IdleTimeout = pick(c.IdleTimeout, d.IdleTimeout)
	c.CallTimeout = pick(c.CallTimeout, d.CallTimeout)
	if c.InboundBudget <= 0 {
		c.InboundBudget = d.InboundBudget
	}
	return c
}

// httpServer is every http.Server the binary runs: the main listener and
// the containers' listener alike.
func (c edgeConfig) httpServer(h http.Handler) *http.Server {
	c = c.withDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout,
		WriteTimeout: c.WriteTimeout, IdleTimeout: c.IdleTimeout}
}
