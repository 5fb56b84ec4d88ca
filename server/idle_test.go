package server_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/helixml/helix-org/server"
)

// TestIdleReleasesOncePerQuietSpell: memory is given back once no request
// has started for a quiet spell, once only however long the quiet lasts,
// never while requests keep coming, and again after the next burst.
func TestIdleReleasesOncePerQuietSpell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Int32
		idle := &server.Idle{Quiet: time.Second, Release: func() { released.Add(1) }}
		h := idle.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		request := func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) }
		go idle.Run(t.Context())

		steps := []struct {
			name string
			do   func()
			want int32
		}{
			{"a start with nothing served gives back once", func() { time.Sleep(1500 * time.Millisecond) }, 1},
			{"staying quiet gives back nothing more", func() { time.Sleep(5 * time.Second) }, 1},
			{"a request every half second holds it off", func() {
				for range 10 {
					request()
					time.Sleep(500 * time.Millisecond)
				}
			}, 1},
			{"quiet after the burst gives back again", func() { time.Sleep(2500 * time.Millisecond) }, 2},
		}
		for _, s := range steps {
			s.do()
			synctest.Wait()
			if got := released.Load(); got != s.want {
				t.Fatalf("%s: released %d times, want %d", s.name, got, s.want)
			}
		}
	})
}

// TestIdleReleasesLongOncePerLongQuiet: what costs something to get back
// is given back only after the longer quiet, once a spell, never for a
// burst's pauses, and again after the next long quiet.
func TestIdleReleasesLongOncePerLongQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released, long atomic.Int32
		idle := &server.Idle{Quiet: time.Second, Release: func() { released.Add(1) },
			Long: 30 * time.Second, ReleaseLong: func() { long.Add(1) }}
		h := idle.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		request := func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) }
		go idle.Run(t.Context())

		steps := []struct {
			name           string
			do             func()
			released, long int32
		}{
			{"a short quiet gives back memory, not the long kind", func() { time.Sleep(5 * time.Second) }, 1, 0},
			{"a long quiet from the start gives back the long kind", func() { time.Sleep(30 * time.Second) }, 1, 1},
			{"staying quiet gives back nothing more", func() { time.Sleep(time.Minute) }, 1, 1},
			{"pauses of 10 seconds in a burst never reach the long quiet", func() {
				for range 6 {
					request()
					time.Sleep(10 * time.Second)
				}
			}, 7, 1},
			{"a long quiet after the burst gives it back again", func() { time.Sleep(31 * time.Second) }, 7, 2},
		}
		for _, s := range steps {
			s.do()
			synctest.Wait()
			if got, gotLong := released.Load(), long.Load(); got != s.released || gotLong != s.long {
				t.Fatalf("%s: released %d and long %d times, want %d and %d", s.name, got, gotLong, s.released, s.long)
			}
		}
	})
}
