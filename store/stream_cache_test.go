package store_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestStreamSeenAtOnce: a stream another handle on the same database
// creates or changes — the CLI beside a server, another server on
// PostgreSQL — is what the server's very next GetStream and
// StreamWithSecrets return, though the server had the stream cached.
func TestStreamSeenAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	if _, err := server.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	describe := func(text string) func() error {
		return func() error {
			return cli.Write(ctx, func(tx *gorm.DB) error {
				return tx.Exec("UPDATE streams SET description = ? WHERE id = ?", text, "s-news").Error
			})
		}
	}
	steps := []struct {
		name     string
		change   func() error
		want     string // the description; "" for no such stream
		notFound bool
	}{
		{"not yet", nil, "", true},
		{"created elsewhere", func() error {
			_, err := cli.CreateStream(ctx, store.OwnerWorker, domain.Stream{ID: "s-news", Name: "news", Description: "first", Transport: domain.Transport{Kind: domain.TransportLocal}})
			return err
		}, "first", false},
		{"cached", nil, "first", false},
		{"changed elsewhere", describe("second"), "second", false},
		{"changed again", describe("third"), "third", false},
	}
	for _, step := range steps {
		if step.change != nil {
			if err := step.change(); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		for _, get := range []func() (domain.Stream, error){
			func() (domain.Stream, error) { return server.GetStream(ctx, "s-news") },
			func() (domain.Stream, error) { return server.StreamWithSecrets(ctx, "s-news") },
		} {
			st, err := get()
			switch {
			case step.notFound:
				if !errors.Is(err, domain.ErrNotFound) {
					t.Errorf("%s: %+v, %v; want not found", step.name, st, err)
				}
			case err != nil || st.Description != step.want:
				t.Errorf("%s: %q, %v; want %q", step.name, st.Description, err, step.want)
			}
		}
	}
}
