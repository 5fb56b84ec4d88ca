package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/helixml/helix-org/domain"
)

// ErrNoOrg is what Orgs.Open returns for an org that has no database.
var ErrNoOrg = errors.New("no such org")

// OrgPrefix is the path an org other than the default is served under.
func OrgPrefix(name string) string {
	if name == "" {
		return ""
	}
	return "/orgs/" + name
}

// Org is one org's running stack as the registry holds it.
type Org struct {
	Handler http.Handler
	// Stop ends the org's loops (dispatcher, outbox, transports), letting
	// running activations finish until ctx ends; HTTP still serves.
	Stop func(ctx context.Context) error
	// Close closes what it holds open (its database, but the default
	// org's), once HTTP has stopped.
	Close func()
	// Release gives memory back when the server is idle; may be nil.
	Release func()
	// Metrics serves the org's /metrics without a token, for the
	// operator's metrics listener (ServeMetrics); may be nil.
	Metrics http.Handler
}

// Orgs serves several orgs on one listener: /orgs/<name>/… goes to that
// org's own stack, with the prefix taken off, and everything else to the
// default org, so today's routes stay as they were. Each org is a
// database with its own store, dispatcher, sessions and caches; nothing
// is shared but the listener. An org is opened on its first request, so
// one created while the server runs is served at once.
type Orgs struct {
	Default *Org
	// Open starts the stack of the named org, or returns ErrNoOrg.
	Open   func(name string) (*Org, error)
	Logger *slog.Logger

	mu     sync.Mutex
	open   map[string]*orgSlot
	closed bool
}

func (o *Orgs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/orgs/")
	if !ok {
		o.Default.Handler.ServeHTTP(w, r)
		return
	}
	name, _, _ := strings.Cut(rest, "/")
	org, ok := o.lookup(w, name)
	if !ok {
		return
	}
	prefix := OrgPrefix(name)
	if r.URL.Path == prefix {
		http.Redirect(w, r, prefix+"/", http.StatusFound)
		return
	}
	org.Handler.ServeHTTP(&prefixWriter{ResponseWriter: w, prefix: prefix}, stripPrefix(r, prefix))
}

// lookup is the named org, opened if need be; when there is none it has
// answered w and says so.
func (o *Orgs) lookup(w http.ResponseWriter, name string) (*Org, bool) {
	if err := domain.ValidateOrgName(name); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return nil, false
	}
	org, err := o.get(name)
	switch {
	case errors.Is(err, ErrNoOrg):
		http.Error(w, fmt.Sprintf("no org named %s on this server: an operator creates it with `helix-org orgs create %s`", name, name), http.StatusNotFound)
		return nil, false
	case err != nil:
		// The cause names files and databases: for the log, not strangers.
		o.logger().Error("open org", "org", name, "err", err)
		http.Error(w, fmt.Sprintf("org %s cannot be served now; the server's log says why", name), http.StatusServiceUnavailable)
		return nil, false
	}
	return org, true
}

// ServeMetrics is the operator's metrics listener: GET /metrics is the
// default org's, GET /orgs/<name>/metrics the named org's (opened as a
// request to it would open it), each without a token.
func (o *Orgs) ServeMetrics() http.Handler {
	serve := func(w http.ResponseWriter, r *http.Request, org *Org) {
		if org.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		org.Metrics.ServeHTTP(w, r)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { serve(w, r, o.Default) })
	mux.HandleFunc("GET /orgs/{name}/metrics", func(w http.ResponseWriter, r *http.Request) {
		if org, ok := o.lookup(w, r.PathValue("name")); ok {
			serve(w, r, org)
		}
	})
	return mux
}

func (o *Orgs) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// get returns the named org's stack, starting it on first use. The
// lock is not held while an org opens (a migration may take a while),
// so orgs already open keep being served meanwhile.
func (o *Orgs) get(name string) (*Org, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	sl, ok := o.open[name]
	if !ok {
		if o.open == nil {
			o.open = map[string]*orgSlot{}
		}
		sl = &orgSlot{ready: make(chan struct{})}
		o.open[name] = sl
	}
	o.mu.Unlock()
	if ok {
		<-sl.ready
		return sl.org, sl.err
	}
	sl.org, sl.err = o.Open(name)
	if sl.err != nil {
		// Not kept: an org created a moment later must be served.
		o.mu.Lock()
		delete(o.open, name)
		o.mu.Unlock()
	}
	close(sl.ready)
	return sl.org, sl.err
}

// orgSlot is an org being opened or open.
type orgSlot struct {
	ready chan struct{}
	org   *Org
	err   error
}

// all is every running org, the default first; once closing, no org
// is added. It waits for orgs still opening.
func (o *Orgs) all(closing bool) []*Org {
	o.mu.Lock()
	o.closed = o.closed || closing
	slots := make([]*orgSlot, 0, len(o.open))
	for _, sl := range o.open {
		slots = append(slots, sl)
	}
	o.mu.Unlock()
	out := []*Org{o.Default}
	for _, sl := range slots {
		if <-sl.ready; sl.err == nil {
			out = append(out, sl.org)
		}
	}
	return out
}

// Shutdown stops every org's loops at once, each with ctx as its grace,
// and refuses to open any other org from then on.
func (o *Orgs) Shutdown(ctx context.Context) error {
	orgs := o.all(true)
	errs := make([]error, len(orgs))
	var wg sync.WaitGroup
	for i, org := range orgs {
		if org.Stop != nil {
			wg.Go(func() { errs[i] = org.Stop(ctx) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes what every org holds open (the default's database is its
// opener's to close); call it once HTTP has stopped.
func (o *Orgs) Close() {
	for _, org := range o.all(true) {
		if org.Close != nil {
			org.Close()
		}
	}
}

// Release gives every open org's memory back.
func (o *Orgs) Release() {
	for _, org := range o.all(false) {
		if org.Release != nil {
			org.Release()
		}
	}
}

// stripPrefix is the request as the org's handler sees it: the path it
// would have on a server of its own.
func stripPrefix(r *http.Request, prefix string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
	r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, prefix)
	return r2
}

// prefixWriter puts the org's prefix on what a handler writes as a path
// of its own server — a redirect's Location and a cookie's Path — so
// every handler mounted in an org (the UI, transports' install flows)
// stays unaware of where it is mounted, and a cookie of one org is never
// sent to another. Links inside pages are the UI's (ui.Config.Root).
type prefixWriter struct {
	http.ResponseWriter
	prefix string
	wrote  bool
}

func (p *prefixWriter) WriteHeader(code int) {
	p.rewrite()
	p.ResponseWriter.WriteHeader(code)
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.rewrite()
	return p.ResponseWriter.Write(b)
}

// Flush and Unwrap keep live views and http.ResponseController working.
func (p *prefixWriter) Flush() {
	p.rewrite()
	http.NewResponseController(p.ResponseWriter).Flush()
}

func (p *prefixWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

func (p *prefixWriter) rewrite() {
	if p.wrote {
		return
	}
	p.wrote = true
	h := p.Header()
	if loc := h.Get("Location"); strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		h.Set("Location", p.prefix+loc)
	}
	cookies := h.Values("Set-Cookie")
	for i, c := range cookies {
		cookies[i] = prefixCookiePath(c, p.prefix)
	}
}

// prefixCookiePath puts prefix before a Set-Cookie's Path attribute; a
// cookie without one would default to the request's (prefixed) path.
func prefixCookiePath(c, prefix string) string {
	parts := strings.Split(c, "; ")
	for i, part := range parts {
		if v, ok := strings.CutPrefix(part, "Path="); ok && strings.HasPrefix(v, "/") {
			parts[i] = "Path=" + prefix + v
		}
	}
	return strings.Join(parts, "; ")
}
