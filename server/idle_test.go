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
