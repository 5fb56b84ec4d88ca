package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/storetest"
)

// TestResults: a kept tool result is read back only by the worker it was
// kept for and only until it expires.
func TestResults(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	ctx := t.Context()
	old, err := st.PutResult(ctx, "w-a", "list_roles", "application/json", []byte(`{"old":1}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Minute)
	r, err := st.PutResult(ctx, "w-a", "read_events", "application/json", []byte(`{"events":[]}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(45 * time.Minute) // old has expired, r has not
	cases := []struct {
		name, worker, id, want string
	}{
		{"the caller reads its result", "w-a", r.ID, `{"events":[]}`},
		{"another worker does not", "w-b", r.ID, ""},
		{"an expired result is gone", "w-a", old.ID, ""},
		{"an unknown id", "w-a", "res-nope", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := st.GetResult(ctx, c.worker, c.id)
			if c.want == "" {
				if !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("err = %v, want not found", err)
				}
				return
			}
			if err != nil || string(got.Content) != c.want || got.Tool != "read_events" {
				t.Fatalf("got %q %q, %v; want %q", got.Content, got.Tool, err, c.want)
			}
		})
	}
}
