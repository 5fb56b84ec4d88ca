package inbound_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/helixml/helix-org/transports/inbound"
)

// countingReader records how much of a body was read.
type countingReader struct {
	r    io.Reader
	read int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func TestBudgetRead(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		declared   int64 // Content-Length; -1 for chunked
		budget     int64 // 0: no shared budget
		inUse      int64 // held by other requests before this one
		wantStatus int   // 0: read succeeds
		wantRead   int   // -1: any
		trickle    bool  // the body arrives a byte at a time
	}{
		{"under the limit", "hello", 5, 0, 0, 0, 5, false},
		{"at the limit", "0123456789", 10, 0, 0, 0, 10, false},
		{"declared over the limit: nothing read", "01234567890", 11, 0, 0, http.StatusRequestEntityTooLarge, 0, false},
		{"chunked over the limit", "01234567890", -1, 0, 0, http.StatusRequestEntityTooLarge, -1, false},
		{"chunked under the limit", "012", -1, 0, 0, 0, 3, false},
		{"fits the budget", "hello", 5, 8, 3, 0, 5, false},
		{"budget in use: 503 before reading", "hello", 5, 8, 4, http.StatusServiceUnavailable, 0, false},
		{"chunked, budget in use: 503", "hello", -1, 8, 4, http.StatusServiceUnavailable, -1, false},
		{"larger than the whole budget: 413 before reading", "0123456789", 10, 8, 0, http.StatusRequestEntityTooLarge, 0, false},
		{"chunked, growing past half the budget", "0123456", -1, 8, 0, 0, 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b *inbound.Budget
			var other *inbound.Body
			if tt.budget > 0 {
				b = inbound.NewBudget(tt.budget)
				if tt.inUse > 0 {
					r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("o", int(tt.inUse))))
					var err error
					if other, err = b.Read(httptest.NewRecorder(), r, 100, nil); err != nil {
						t.Fatalf("hold %d bytes: %v", tt.inUse, err)
					}
				}
			}
			src := &countingReader{r: strings.NewReader(tt.body)}
			if tt.trickle {
				src.r = iotest.OneByteReader(src.r)
			}
			r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(src))
			r.ContentLength = tt.declared
			var sum bytes.Buffer
			got, err := b.Read(httptest.NewRecorder(), r, 10, &sum)
			if tt.wantRead >= 0 && src.read != tt.wantRead {
				t.Errorf("read %d bytes of the body, want %d", src.read, tt.wantRead)
			}
			if tt.wantStatus == 0 {
				if err != nil || string(got.Bytes) != tt.body || sum.String() != tt.body {
					t.Fatalf("Read = %v, %v (sum %q); want %q", got, err, sum.String(), tt.body)
				}
				got.Release()
			} else if s := inbound.ReadStatus(err); err == nil || s != tt.wantStatus {
				t.Fatalf("Read = %v, %v (status %d); want status %d", got, err, s, tt.wantStatus)
			}
			other.Release()
			if b != nil && b.InUse() != 0 {
				t.Errorf("after every Release the budget holds %d bytes", b.InUse())
			}
		})
	}
	if s := inbound.ReadStatus(errors.New("connection reset")); s != http.StatusBadRequest {
		t.Errorf("ReadStatus(other) = %d, want 400", s)
	}
}

// TestBudgetHoldsUntilRelease: a body's bytes count until the handler is
// done with it; a chunked body is charged for its buffer as it grows.
func TestBudgetHoldsUntilRelease(t *testing.T) {
	b := inbound.NewBudget(1 << 20)
	known := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("k", 1000)))
	body, err := b.Read(httptest.NewRecorder(), known, 1<<20, nil)
	if err != nil || b.InUse() != 1000 {
		t.Fatalf("after a 1000-byte read: %v, in use %d, want 1000", err, b.InUse())
	}
	chunked := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader(strings.Repeat("c", 100_000))))
	chunked.ContentLength = -1
	body2, err := b.Read(httptest.NewRecorder(), chunked, 1<<20, nil)
	if err != nil || len(body2.Bytes) != 100_000 {
		t.Fatalf("chunked read: %v", err)
	}
	if held := b.InUse() - 1000; held < 100_000 || held > 200_000 || held != int64(cap(body2.Bytes)) {
		t.Errorf("chunked body of 100000 bytes holds %d (buffer %d), want its buffer's size", held, cap(body2.Bytes))
	}
	body.Release()
	body.Release() // twice is harmless
	body2.Release()
	if b.InUse() != 0 {
		t.Errorf("after Release the budget holds %d", b.InUse())
	}
}

// TestFailHidesServerFaults: a 5xx answers only its status text (the log
// has the detail); a refusal answers its reason.
func TestFailHidesServerFaults(t *testing.T) {
	tests := []struct {
		code              int
		wantBody, wantLog string
	}{
		{http.StatusInternalServerError, "Internal Server Error", "level=ERROR msg=\"thing failed\" err=\"disk /var/secret full\""},
		{http.StatusForbidden, "disk /var/secret full", "level=WARN msg=\"thing refused\" status=403"},
	}
	t.Run("busy", func(t *testing.T) {
		var logs bytes.Buffer
		w := httptest.NewRecorder()
		inbound.Fail(slog.New(slog.NewTextHandler(&logs, nil)), "thing", w, 503, fmt.Errorf("%w: try later", inbound.ErrBusy))
		if w.Code != 503 || w.Header().Get("Retry-After") != inbound.RetryAfter || !strings.Contains(w.Body.String(), "try later") {
			t.Errorf("busy answered %d %v %s, want 503 with Retry-After and the reason", w.Code, w.Header(), w.Body)
		}
		if !strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("busy is not a fault, logged %q", logs.String())
		}
	})
	for _, tt := range tests {
		var logs bytes.Buffer
		w := httptest.NewRecorder()
		inbound.Fail(slog.New(slog.NewTextHandler(&logs, nil)), "thing", w, tt.code, errors.New("disk /var/secret full"))
		var got map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != tt.code || got["error"] != tt.wantBody {
			t.Errorf("%d: answered %d %s, want {\"error\":%q}", tt.code, w.Code, w.Body, tt.wantBody)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%d: Content-Type %q", tt.code, ct)
		}
		if !strings.Contains(logs.String(), tt.wantLog) {
			t.Errorf("%d: log %q lacks %q", tt.code, logs.String(), tt.wantLog)
		}
	}
}

// TestBudgetBoundsGarbage: a released body counts against the budget
// until the collector has taken it, so with the collector off a hundred
// 4 MiB bodies read one after another, known-length and chunked, leave
// no more than the budget of bodies in the heap. (Counting only the
// bodies being handled, it grew by 600 MiB.)
func TestBudgetBoundsGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const size, budget = 4 << 20, 12 << 20
	src := bytes.Repeat([]byte("x"), size)
	b := inbound.NewBudget(budget)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	for i := range 100 {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(src))
		if i%2 == 1 {
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(src)), -1
		}
		body, err := b.Read(httptest.NewRecorder(), r, size, nil)
		if err != nil || len(body.Bytes) != size {
			t.Fatalf("read %d: %v", i, err)
		}
		body.Release()
		if body.Bytes != nil {
			t.Fatal("Bytes kept after Release")
		}
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	if grown := peak - base; grown > budget+1<<20 {
		t.Errorf("the heap grew by %d MiB reading 4 MiB bodies under a %d MiB budget", grown>>20, budget>>20)
	}
}
