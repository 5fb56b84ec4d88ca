package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestAuthenticateSeesEveryChange: a server's Authenticate answers from
// what it kept only while nothing it kept has changed. Each change is
// made through a second handle on the same database — the CLI beside a
// server, or another server on PostgreSQL — or by the clock, and the
// server's very next Authenticate shows it. A token's or a skill's last
// use changes nothing kept, and leaves the epoch where it was.
func TestAuthenticateSeesEveryChange(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := storetest.NewClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	server, cli := twoHandles(t, clock.Now)
	if _, err := server.Bootstrap(ctx, []string{"publish", "read_events", "list_roles", "grant_tool"}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-staff", Title: "Staff", Content: "Work."}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-staff", RoleID: "r-staff", Title: "Staff"}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-staff", Name: "Maya"},
		[]string{"publish"}); err != nil {
		t.Fatal(err)
	}
	hour := clock.Now().Add(time.Hour)
	if _, err := server.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-maya", Tool: "read_events", ExpiresAt: &hour}); err != nil {
		t.Fatal(err)
	}
	tok, err := server.CreateToken(ctx, store.TokenSpec{WorkerID: "w-maya", Kind: store.TokenOperator, TTL: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	short, err := server.CreateToken(ctx, store.TokenSpec{WorkerID: "w-maya", Kind: store.TokenOperator, TTL: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name      string
		change    func() error
		token     string
		wantTools []string
		dismissed bool
		badToken  bool
		sameEpoch bool
	}{
		{"first read", nil, tok, []string{"publish", "read_events"}, false, false, true},
		{"read again", nil, tok, []string{"publish", "read_events"}, false, false, true},
		{"a token's use, recorded", func() error {
			clock.Advance(2 * time.Minute)
			_, err := cli.VerifyToken(ctx, tok)
			return err
		}, tok, []string{"publish", "read_events"}, false, false, true},
		{"a grant revoked", func() error { return cli.RevokeTool(ctx, store.OwnerWorker, "w-maya", "publish") }, tok, []string{"read_events"}, false, false, false},
		{"a grant given", func() error {
			_, err := cli.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-maya", Tool: "list_roles"})
			return err
		}, tok, []string{"list_roles", "read_events"}, false, false, false},
		{"a grant made to wait for approval", func() error {
			_, err := cli.GrantTool(ctx, store.OwnerWorker, domain.Grant{WorkerID: "w-maya", Tool: "list_roles", Approval: domain.ApprovalRequired})
			return err
		}, tok, []string{"list_roles", "read_events"}, false, false, false},
		{"a grant lapses", func() error { clock.Advance(time.Hour); return nil }, tok, []string{"list_roles"}, false, false, true},
		{"a token lapses", func() error { clock.Advance(time.Hour); return nil }, short, nil, false, true, true},
		{"a skill added", func() error {
			_, err := cli.SaveSkill(ctx, store.OwnerWorker, domain.Skill{Name: "csv_sum", Description: "Sum CSV columns", InputSchema: json.RawMessage(`{"type":"object"}`),
				Version: 1, Image: "img:v1", Status: domain.SkillReady, CreatedBy: store.OwnerWorker})
			return err
		}, tok, []string{"list_roles"}, false, false, false},
		{"a skill used", func() error { return cli.TouchSkill(ctx, "csv_sum") }, tok, []string{"list_roles"}, false, false, true},
		{"the worker dismissed", func() error {
			_, err := cli.DismissWorker(ctx, store.OwnerWorker, "w-maya")
			return err
		}, tok, nil, true, false, false},
		{"the token revoked", func() error { return cli.RevokeToken(ctx, tok) }, tok, nil, false, true, false},
	}
	wantSkills := map[string]int{"a skill added": 1, "a skill used": 1}
	wantHeld := map[string][]string{"a grant made to wait for approval": {"list_roles"}, "a grant lapses": {"list_roles"},
		"a skill added": {"list_roles"}, "a skill used": {"list_roles"}}
	epoch, err := server.AuthEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		if step.change != nil {
			if err := step.change(); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		now, err := server.AuthEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (now == epoch) != step.sameEpoch {
			t.Errorf("%s: epoch %d → %d, want it moved: %v", step.name, epoch, now, !step.sameEpoch)
		}
		epoch = now
		b, err := server.Authenticate(ctx, step.token)
		switch {
		case step.badToken:
			if !errors.Is(err, store.ErrBadToken) {
				t.Errorf("%s: Authenticate = %+v, %v; want ErrBadToken", step.name, b, err)
			}
		case err != nil:
			t.Errorf("%s: %v", step.name, err)
		case step.dismissed:
			if b.Worker.Active() {
				t.Errorf("%s: the worker is still active", step.name)
			}
		case !slices.Equal(b.Tools, step.wantTools) || b.Token.WorkerID != "w-maya":
			t.Errorf("%s: %s holds %v, want w-maya holding %v", step.name, b.Token.WorkerID, b.Tools, step.wantTools)
		case len(b.Skills) != wantSkills[step.name]:
			t.Errorf("%s: %d skills, want %d", step.name, len(b.Skills), wantSkills[step.name])
		case !slices.Equal(b.Held, wantHeld[step.name]):
			t.Errorf("%s: %v wait for approval, want %v", step.name, b.Held, wantHeld[step.name])
		}
	}
}
