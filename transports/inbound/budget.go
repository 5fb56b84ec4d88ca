package inbound

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
)

// DefaultBudget is the default byte budget of a server's inbound bodies.
const DefaultBudget = 64 << 20

// Budget bounds the bytes of unauthenticated request bodies held in memory
// at once, across every inbound handler: without it, forty 25 MiB GitHub
// deliveries with bad signatures take a gigabyte before the first is
// refused. A body that does not fit is refused at once (503, Retry-After)
// rather than queued, so waiting requests hold nothing.
//
// A released body is garbage the collector has not taken yet, and at the
// server's GOGC the collector lets garbage grow to twice what was live at
// its last run, which a storm of bodies inflates: so released bytes count
// against the budget too, until a collection begun after their release
// has ended. A hold they stand in the way of forces that collection. The
// heap's bodies, live and dead, stay within the budget.
//
// Safe for concurrent use; a nil *Budget bounds nothing but each
// request's limit.
type Budget struct {
	mu  sync.Mutex
	max int64
	// used is what bodies being handled hold; freed, what released ones
	// held and the collector may not have taken yet.
	used, freed int64
	// collecting lets one hold at a time force a collection.
	collecting sync.Mutex
}

// NewBudget returns a budget of max bytes (<= 0: DefaultBudget).
func NewBudget(max int64) *Budget {
	if max <= 0 {
		max = DefaultBudget
	}
	return &Budget{max: max}
}

// InUse is how many bytes bodies hold now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *Budget) tryHold(n int64) bool {
	if b == nil || n == 0 {
		return true
	}
	for collected := false; ; collected = true {
		b.mu.Lock()
		fits, fitsAfterGC := b.used+b.freed+n <= b.max, b.used+n <= b.max
		if fits {
			b.used += n
		}
		b.mu.Unlock()
		if fits || !fitsAfterGC || collected {
			return fits
		}
		b.collect()
	}
}

// collect runs a collection, after which what was released before it
// began is no longer in the heap.
func (b *Budget) collect() {
	b.collecting.Lock()
	defer b.collecting.Unlock()
	b.mu.Lock()
	freed := b.freed
	b.mu.Unlock()
	if freed == 0 { // collected while this hold waited its turn
		return
	}
	runtime.GC()
	b.mu.Lock()
	b.freed -= freed
	b.mu.Unlock()
}

// release moves n bytes from the bodies being handled to the garbage.
func (b *Budget) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.freed += n
}

// Body is a request body read under a Budget. Its bytes count against the
// budget until Release, which the handler defers: the body and what is
// parsed from it live until the handler answers.
type Body struct {
	Bytes  []byte
	budget *Budget
	held   int64
}

// Release returns the body's bytes to the budget and drops them: Bytes is
// nil afterwards. It is safe to call more than once.
func (b *Body) Release() {
	if b == nil {
		return
	}
	b.Bytes = nil
	b.budget.release(b.held)
	b.held = 0
}

func (b *Body) hold(n int64) error {
	if b.budget != nil && n > b.budget.max {
		return readErr(&http.MaxBytesError{Limit: b.budget.max})
	}
	if !b.budget.tryHold(n) {
		return fmt.Errorf("%w: the server's inbound byte budget is in use; retry in %s seconds", ErrBusy, RetryAfter)
	}
	b.held += n
	return nil
}

// Read reads r's body, at most limit bytes, refusing a declared larger
// body before reading any of it. Memory for the body is held against the
// budget before it is allocated: the declared length up front, or, for a
// body without Content-Length, each growth of the buffer. Every byte read
// is also written to sum when it is not nil, so a signature (an HMAC) is
// computed while reading instead of over a second copy.
func (b *Budget) Read(w http.ResponseWriter, r *http.Request, limit int64, sum io.Writer) (*Body, error) {
	if r.ContentLength > limit {
		return nil, readErr(&http.MaxBytesError{Limit: limit})
	}
	src := io.Reader(http.MaxBytesReader(w, r.Body, limit))
	if sum != nil {
		src = io.TeeReader(src, sum)
	}
	body := &Body{budget: b}
	var err error
	if r.ContentLength >= 0 {
		err = body.readKnown(src, r.ContentLength)
	} else {
		err = body.readChunked(src, limit)
	}
	if err != nil {
		body.Release()
		return nil, err
	}
	return body, nil
}

func (b *Body) readKnown(src io.Reader, n int64) error {
	if err := b.hold(n); err != nil {
		return err
	}
	b.Bytes = make([]byte, n)
	if _, err := io.ReadFull(src, b.Bytes); err != nil {
		return readErr(err)
	}
	return nil
}

// readChunked grows the buffer by doubling, holding each new buffer
// before it is allocated.
func (b *Body) readChunked(src io.Reader, limit int64) error {
	var chunk [32 << 10]byte
	for {
		n, err := src.Read(chunk[:])
		if n > 0 {
			if len(b.Bytes)+n > cap(b.Bytes) {
				grow := min(max(2*cap(b.Bytes), len(b.Bytes)+n), int(limit))
				// The old buffer is garbage once copied: released first, it
				// counts as such, and a growth past half the budget still fits.
				old := int64(cap(b.Bytes))
				b.budget.release(old)
				b.held -= old
				if herr := b.hold(int64(grow)); herr != nil {
					return herr
				}
				b.Bytes = append(make([]byte, 0, grow), b.Bytes...)
			}
			b.Bytes = append(b.Bytes, chunk[:n]...)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr(err)
		}
	}
}
