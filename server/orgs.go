package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helixml/helix-org/domain"
)

// ErrNoOrg is what Orgs.Open returns for an org that has no database.
var ErrNoOrg = errors.New("no such org")

// ArchivedError is what Orgs.Open returns for an org an operator has
// archived: its database is kept, and nothing of it is served or runs.
type ArchivedError struct {
	Since time.Time
}

func (e *ArchivedError) Error() string {
	return "archived since " + e.Since.UTC().Format(time.RFC3339)
}

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
	// Drain ends the requests it would otherwise hold open (live views,
	// long-polls), once its runs have ended; may be nil.
	Drain func()
	// Close closes what it holds open (its database, but the default
	// org's), once HTTP has stopped.
	Close func()
	// Release gives memory back when the server is idle; may be nil.
	Release func()
	// Metrics serves the org's /metrics without a token, for the
	// operator's metrics listener (ServeMetrics); may be nil.
	Metrics http.Handler
	// Archived says whether an operator has archived the org since it
	// was opened (`helix-org orgs archive`); nil for the default org,
	// which cannot be. It is asked on every request to the org, and
	// whenever Changed fires or ArchiveCheck passes.
	Archived func(ctx context.Context) (time.Time, bool, error)
	// Changed returns a channel closed when the org's settings change,
	// where the archive mark lives; may be nil.
	Changed func() <-chan struct{}

	// servedAt is when a request last read the org as not archived, in
	// Unix nanoseconds (Orgs.ArchiveRecheck).
	servedAt atomic.Int64
	// stopping is set once the org is found archived: its runs are being
	// let finish, and it is served until they have.
	stopping atomic.Bool
}

// Orgs serves several orgs on one listener: /orgs/<name>/… goes to that
// org's own stack, with the prefix taken off, and everything else to the
// default org, so today's routes stay as they were. Each org is a
// database with its own store, dispatcher, sessions and caches; nothing
// is shared but the listener. An org is opened on its first request, so
// one created while the server runs is served at once.
type Orgs struct {
	Default *Org
	// Open starts the stack of the named org, or returns ErrNoOrg or an
	// *ArchivedError.
	Open   func(name string) (*Org, error)
	Logger *slog.Logger
	// Grace is how long the runs of an archived org may take to finish,
	// as at a shutdown (a minute when zero).
	Grace time.Duration
	// ArchiveCheck is how often an open org is asked whether it was
	// archived when nothing else says so: another process's write to a
	// SQLite database wakes nothing here (5s when zero).
	ArchiveCheck time.Duration
	// ArchiveRecheck is how long requests to an org trust the last
	// request's read of its archive mark, so that a busy org pays one read
	// per interval, not one per request (100ms when zero; negative: every
	// request reads it).
	ArchiveRecheck time.Duration

	mu     sync.Mutex
	open   map[string]*orgSlot
	closed bool
	// retiring counts archived orgs still stopping; Close waits for them.
	retiring sync.WaitGroup
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
	if org.Archived != nil && !org.stopping.Load() {
		if _, archived, err := o.archived(r.Context(), org); err != nil {
			// The org's own handler answers for an unreadable database.
			o.logger().Warn("read whether org is archived", "org", name, "err", err)
		} else if archived {
			// Served still: its runs reach their endpoints until they end.
			o.retire(name, org)
		}
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
	var archived *ArchivedError
	switch {
	case errors.As(err, &archived):
		archivedGone(w, name, archived.Since)
		return nil, false
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

// archived reads the org's archive mark for a request, unless another
// request read it as not archived within ArchiveRecheck.
func (o *Orgs) archived(ctx context.Context, org *Org) (time.Time, bool, error) {
	fresh := o.ArchiveRecheck
	if fresh == 0 {
		fresh = 100 * time.Millisecond
	}
	now := time.Now().UnixNano()
	if now-org.servedAt.Load() < int64(fresh) {
		return time.Time{}, false, nil
	}
	at, archived, err := org.Archived(ctx)
	if err == nil && !archived {
		org.servedAt.Store(now)
	}
	return at, archived, err
}

// archivedGone answers a request to an archived org.
func archivedGone(w http.ResponseWriter, name string, at time.Time) {
	http.Error(w, fmt.Sprintf("org %s was archived on %s: nothing of it is served or runs, and its data is kept; an operator restores it with `helix-org orgs restore %s`", name, at.UTC().Format(time.RFC3339), name), http.StatusGone)
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
		// Not kept: an org created or restored a moment later must be
		// served.
		o.mu.Lock()
		delete(o.open, name)
		o.mu.Unlock()
	} else if sl.org.Archived != nil {
		sl.gone = make(chan struct{})
		go o.watchArchive(name, sl)
	}
	close(sl.ready)
	return sl.org, sl.err
}

// orgSlot is an org being opened or open.
type orgSlot struct {
	ready chan struct{}
	org   *Org
	err   error
	// gone is closed when the org is archived or the server closes: its
	// archive watch ends.
	gone     chan struct{}
	goneOnce sync.Once
}

func (sl *orgSlot) end() {
	if sl.gone != nil {
		sl.goneOnce.Do(func() { close(sl.gone) })
	}
}

// watchArchive retires the org once it is archived, whether or not a
// request comes: its dispatcher, schedules and deliveries stop too.
func (o *Orgs) watchArchive(name string, sl *orgSlot) {
	every := o.ArchiveCheck
	if every <= 0 {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var changed <-chan struct{}
		if sl.org.Changed != nil {
			changed = sl.org.Changed()
		}
		if _, archived, err := sl.org.Archived(context.Background()); err == nil && archived {
			o.retire(name, sl.org)
			return
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-sl.gone:
			return
		}
	}
}

// retire takes an archived org out of service as a shutdown does: no
// run starts, its runs have Grace to finish — served meanwhile, so that
// they reach their endpoints — and are interrupted after it, their
// triggers waiting for the org's next start. Then its loops have
// stopped, what it holds open closes, and requests get 410 (its next
// opening finds it archived). Only the first of several callers does it.
func (o *Orgs) retire(name string, org *Org) {
	o.mu.Lock()
	sl, ok := o.open[name]
	if !ok || sl.org != org || o.closed || org.stopping.Load() {
		// Retiring already, or the server is closing and will stop it.
		o.mu.Unlock()
		return
	}
	org.stopping.Store(true)
	o.retiring.Add(1)
	o.mu.Unlock()
	sl.end()
	o.logger().Info("org archived: letting its runs finish, then stopping it", "org", name, "grace", o.grace())
	go func() {
		defer o.retiring.Done()
		ctx, cancel := context.WithTimeout(context.Background(), o.grace())
		defer cancel()
		if org.Stop != nil {
			if err := org.Stop(ctx); err != nil {
				o.logger().Warn("stop archived org", "org", name, "err", err)
			}
		}
		o.mu.Lock()
		if o.open[name] == sl {
			delete(o.open, name)
		}
		o.mu.Unlock()
		if org.Drain != nil {
			org.Drain()
		}
		if org.Close != nil {
			org.Close()
		}
		o.logger().Info("org archived: stopped", "org", name)
	}()
}

func (o *Orgs) grace() time.Duration {
	if o.Grace <= 0 {
		return time.Minute
	}
	return o.Grace
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
		// An archived org stopping is its retire's to stop and close.
		if <-sl.ready; sl.err == nil && !sl.org.stopping.Load() {
			if closing {
				sl.end()
			}
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

// Drain ends the requests every org would otherwise hold open, so an
// HTTP shutdown after it waits for none; call it after Shutdown.
func (o *Orgs) Drain() {
	for _, org := range o.all(false) {
		if org.Drain != nil {
			org.Drain()
		}
	}
}

// Close closes what every org holds open (the default's database is its
// opener's to close); call it once HTTP has stopped.
func (o *Orgs) Close() {
	for _, org := range o.all(true) {
		if org.Close != nil {
			org.Close()
		}
	}
	o.retiring.Wait()
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
