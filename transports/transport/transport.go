// Package transport is the shape of a transport plug-in: each package
// under transports/ exports one Descriptor, and cmd lists them once, in a
// List. Everything the core does with a kind — offer it in create_stream,
// validate and encrypt its config, mount its routes, send what workers
// publish, run its clock — it reads from the descriptor, so a new
// transport is a new package and one line in that list.
package transport

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
)

// Descriptor is one transport kind.
type Descriptor struct {
	// TransportSpec is what the core itself reads: kind, config check
	// and description, secret fields, whether workers may publish.
	domain.TransportSpec
	// Settings are the kind's operational config keys.
	Settings domain.Settings
	// Endpoints are its inbound routes; nil for a kind nobody calls.
	Endpoints func(Deps) []inbound.Endpoint
	// Handlers are routes of another shape than an inbound message, such
	// as an OAuth install flow; each authenticates its own requests.
	Handlers func(Deps) []Route
	// Sender delivers what workers publish; nil for a kind that never sends.
	Sender func(Deps) delivery.Sender
	// Run, when set, is a loop the server runs until ctx ends (the
	// schedule's clock).
	Run func(ctx context.Context, d Deps) error
}

// Deps are what a transport is built with.
type Deps struct {
	Store Store
	// Client makes outbound requests; it refuses private addresses
	// unless the operator allows them (safedial).
	Client *http.Client
	// Now is the clock; time.Now in production.
	Now       func() time.Time
	Logger    *slog.Logger
	UserAgent string
	// Operator returns the worker behind r when r comes from a session
	// that may change operational config (the owner, signed in with a
	// one-time link), else an error saying why not. Nil refuses everyone.
	Operator func(r *http.Request) (string, error)
}

// List is the transports a binary serves, in the order they are offered.
type List []Descriptor

// Specs is the registry the store and the tools read.
func (l List) Specs() *domain.Transports {
	specs := make([]domain.TransportSpec, len(l))
	for i, d := range l {
		specs[i] = d.TransportSpec
	}
	return domain.NewTransports(specs...)
}

// Settings are every transport's config keys.
func (l List) Settings() domain.Settings {
	var all domain.Settings
	for _, d := range l {
		all = append(all, d.Settings...)
	}
	return all
}

// Route is one handler to mount.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Routes are every transport's inbound handlers, sharing one byte budget,
// then its other handlers.
func (l List) Routes(d Deps, budget *inbound.Budget) []Route {
	var routes []Route
	for _, desc := range l {
		if desc.Endpoints == nil {
			continue
		}
		for _, e := range desc.Endpoints(d) {
			routes = append(routes, Route{Pattern: e.Pattern, Handler: e.Handler(d.Store, budget, d.Logger)})
		}
	}
	for _, desc := range l {
		if desc.Handlers != nil {
			routes = append(routes, desc.Handlers(d)...)
		}
	}
	return routes
}

// Senders are the delivery engine's senders, one per kind that sends.
func (l List) Senders(d Deps) []delivery.Sender {
	var ss []delivery.Sender
	for _, desc := range l {
		if desc.Sender != nil {
			ss = append(ss, desc.Sender(d))
		}
	}
	return ss
}

// Run runs every transport's loop until ctx ends, returning when all have.
func (l List) Run(ctx context.Context, d Deps) {
	done := make(chan struct{})
	n := 0
	for _, desc := range l {
		if desc.Run == nil {
			continue
		}
		n++
		go func() {
			defer func() { done <- struct{}{} }()
			if err := desc.Run(ctx, d); err != nil && ctx.Err() == nil {
				d.Logger.Error("transport loop stopped", "kind", desc.Kind, "err", err)
			}
		}()
	}
	for range n {
		<-done
	}
}
