package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

var limitSetting = domain.SettingSpec{Key: "test.limit", Type: domain.SettingInt, Default: "10"}

// TestSettingSeenAtOnce: a value set or deleted through the server's own
// store handle, or through another on the same database — the CLI's
// `config set` beside a running server, or a second server on PostgreSQL
// — is what the server's very next read returns, though it had the value
// cached.
func TestSettingSeenAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	for _, by := range []struct {
		name string
		st   *store.Store
	}{{"the server", server}, {"another process", cli}} {
		t.Run(by.name, func(t *testing.T) {
			steps := []struct {
				name string
				do   func() error
				want int64
			}{
				{"default", func() error { return nil }, 10},
				{"cached", func() error { return nil }, 10},
				{"set", func() error { return by.st.SetSetting(ctx, limitSetting, "20") }, 20},
				{"set again", func() error { return by.st.SetSetting(ctx, limitSetting, "30") }, 30},
				{"deleted", func() error { return by.st.DeleteSetting(ctx, limitSetting.Key) }, 10},
			}
			for _, step := range steps {
				if err := step.do(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if got := server.IntSetting(ctx, limitSetting); got != step.want {
					t.Errorf("%s by %s: the server reads %d, want %d", step.name, by.name, got, step.want)
				}
			}
		})
	}
}

// twoHandles opens two stores on one database, as a server and the CLI
// beside it, or two servers on PostgreSQL, are; now is their clock (nil:
// the real one).
func twoHandles(t *testing.T, now func() time.Time) (server, cli *store.Store) {
	db := storetest.DB(t)
	key := filepath.Join(t.TempDir(), "helix-org.key")
	open := func() *store.Store {
		st, err := store.Open(t.Context(), db, store.Options{Synchronous: "NORMAL", KeyFile: key, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	return open(), open()
}

// TestRequestsAtTheirEpochs: a request whose cached reads take the
// epochs its authentication read (store.WithEpochs) sees a change made by
// another process before it was authenticated, and so the next request
// sees any change, whatever the one before it read and kept.
func TestRequestsAtTheirEpochs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	if _, err := server.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	tok, err := server.CreateToken(ctx, store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator})
	if err != nil {
		t.Fatal(err)
	}
	request := func() context.Context {
		t.Helper()
		b, err := server.Authenticate(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		return store.WithEpochs(ctx, b.Epochs)
	}
	stale := request()
	for i, v := range []string{"20", "30", "40"} {
		if got := server.IntSetting(stale, limitSetting); i == 0 && got != 10 {
			t.Errorf("before any change: %d, want 10", got)
		}
		if err := cli.SetSetting(ctx, limitSetting, v); err != nil {
			t.Fatal(err)
		}
		// A request authenticated before the change reads at its epoch
		// and may keep what it read; the next one reads the change.
		server.IntSetting(stale, limitSetting)
		if got, want := server.IntSetting(request(), limitSetting), int64(20+10*i); got != want {
			t.Errorf("the request after setting %s reads %d", v, got)
		}
		server.IntSetting(stale, limitSetting)
		if got, want := server.IntSetting(ctx, limitSetting), int64(20+10*i); got != want {
			t.Errorf("a read outside any request, after setting %s: %d", v, got)
		}
	}
}

// TestAccessSeenAtOnce: an org role or a subscription changed by another
// process is what the next request reads — in its authentication's
// epochs or reading its own — though the server kept the old one.
func TestAccessSeenAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	seed(t, server)
	if _, err := server.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Maya"}, nil); err != nil {
		t.Fatal(err)
	}
	tok, err := server.CreateToken(ctx, store.TokenSpec{WorkerID: "w-maya", Kind: store.TokenOperator})
	if err != nil {
		t.Fatal(err)
	}
	requests := map[string]func() context.Context{
		"its authentication's epochs": func() context.Context {
			b, err := server.Authenticate(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			return store.WithEpochs(ctx, b.Epochs)
		},
		"its own": func() context.Context { return ctx },
	}
	steps := []struct {
		name string
		do   func() error
		role domain.OrgRole
		subs []string
	}{
		{"at first", func() error { return nil }, domain.RoleMember, nil},
		{"kept", func() error { return nil }, domain.RoleMember, nil},
		{"made a viewer", func() error { _, err := cli.SetOrgRole(ctx, "w-owner", "w-maya", domain.RoleViewer); return err }, domain.RoleViewer, nil},
		{"subscribed", func() error { _, err := cli.Subscribe(ctx, "w-owner", "s-a", "w-maya"); return err }, domain.RoleViewer, []string{"s-a"}},
		{"made an admin", func() error { _, err := cli.SetOrgRole(ctx, "w-owner", "w-maya", domain.RoleAdmin); return err }, domain.RoleAdmin, []string{"s-a"}},
		{"unsubscribed", func() error { return cli.Unsubscribe(ctx, "w-owner", "s-a", "w-maya") }, domain.RoleAdmin, nil},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for name, request := range requests {
			rctx := request()
			if role, err := server.OrgRole(rctx, "w-maya"); err != nil || role != step.role {
				t.Errorf("%s, a request at %s: role %q, %v; want %q", step.name, name, role, err, step.role)
			}
			subs, err := server.SubscribedStreams(rctx, "w-maya")
			if err != nil || !slices.Equal(subs, step.subs) {
				t.Errorf("%s, a request at %s: follows %v, %v; want %v", step.name, name, subs, err, step.subs)
			}
		}
	}
}

// TestWriteRequestReadsAnewOnceItWrites: a request whose cached reads
// take its authentication's epochs (store.WithAuthenticated) reads them
// anew from its first write on, so a change another process made before
// that write — here after the request was authenticated — is seen after it.
func TestWriteRequestReadsAnewOnceItWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	server, cli := twoHandles(t, nil)
	seed(t, server)
	if _, err := server.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-a", Name: "Maya"}, nil); err != nil {
		t.Fatal(err)
	}
	tok, err := server.CreateToken(ctx, store.TokenSpec{WorkerID: "w-owner", Kind: store.TokenOperator})
	if err != nil {
		t.Fatal(err)
	}
	b, err := server.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	rctx := store.WithAuthenticated(ctx, b.Epochs)
	if role, err := server.OrgRole(rctx, "w-maya"); err != nil || role != domain.RoleMember {
		t.Fatalf("before any change: %q, %v; want member", role, err)
	}
	if _, err := cli.SetOrgRole(ctx, "w-owner", "w-maya", domain.RoleViewer); err != nil {
		t.Fatal(err)
	}
	// The request writes something else; what it reads next is current.
	if _, err := server.CreateRole(rctx, "w-owner", domain.Role{ID: "r-b", Title: "B", Content: "b"}); err != nil {
		t.Fatal(err)
	}
	if role, err := server.OrgRole(rctx, "w-maya"); err != nil || role != domain.RoleViewer {
		t.Errorf("after the request wrote: %q, %v; want viewer", role, err)
	}
}
