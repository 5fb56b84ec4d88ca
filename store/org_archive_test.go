package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

// TestArchiveSeenByTheServer: `orgs archive` and `orgs restore` run in
// the CLI beside a running server, whose next read sees each, though it
// had read the org as served a moment before; archiving twice or
// restoring an org that is not archived is a conflict that says so.
func TestArchiveSeenByTheServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Date(2026, 12, 1, 17, 30, 0, 0, time.UTC)
	server, cli := twoHandles(t, func() time.Time { return now })
	steps := []struct {
		name         string
		do           func() error
		wantErr      string
		wantArchived bool
	}{
		{name: "fresh", do: func() error { return nil }},
		{name: "archive", do: func() error { _, err := cli.Archive(ctx); return err }, wantArchived: true},
		{name: "archive again", do: func() error { _, err := cli.Archive(ctx); return err }, wantErr: "archive: conflict: it has been archived since 2026-12-01T17:30:00Z", wantArchived: true},
		{name: "restore", do: func() error { return cli.Restore(ctx) }},
		{name: "restore again", do: func() error { return cli.Restore(ctx) }, wantErr: "restore: conflict: it is not archived"},
		{name: "archive by the server", do: func() error { _, err := server.Archive(ctx); return err }, wantArchived: true},
	}
	for _, step := range steps {
		err := step.do()
		switch {
		case step.wantErr == "" && err != nil:
			t.Fatalf("%s: %v", step.name, err)
		case step.wantErr != "" && (err == nil || !strings.Contains(err.Error(), step.wantErr) || !errors.Is(err, domain.ErrConflict)):
			t.Errorf("%s: %v, want a conflict %q", step.name, err, step.wantErr)
		}
		at, archived, err := server.Archived(ctx)
		if err != nil {
			t.Fatalf("%s: read: %v", step.name, err)
		}
		if archived != step.wantArchived || (archived && !at.Equal(now)) {
			t.Errorf("%s: the server reads archived=%v at %v, want archived=%v at %v", step.name, archived, at, step.wantArchived, now)
		}
	}
}
