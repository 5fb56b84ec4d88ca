package orgdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/orgdir"
	"github.com/helixml/helix-org/store/storetest"
)

// TestRoundTripPeople: org roles and invitations travel with the org, so
// a viewer stays a viewer and a pending invitation stays pending (it still
// expires, and signing in accepts it) in the copy.
func TestRoundTripPeople(t *testing.T) {
	ctx := t.Context()
	st := storetest.New(t)
	if _, err := st.Bootstrap(ctx, []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateRole(ctx, "w-owner", domain.Role{ID: "r-staff", Title: "Staff", Content: "Work."}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePosition(ctx, "w-owner", domain.Position{ID: "p-staff", RoleID: "r-staff", Title: "Staff"}); err != nil {
		t.Fatal(err)
	}
	invite := func(email string, role domain.OrgRole) store.Invitation {
		inv, _, err := st.Invite(ctx, "w-owner", store.InviteSpec{Email: email, Position: "p-staff", Role: role, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	joined, pending, revoked := invite("ada@example.com", domain.RoleMember), invite("bo@example.com", domain.RoleAdmin), invite("cy@example.com", domain.RoleMember)
	if _, _, err := st.SignInWithEmail(ctx, "ada@example.com", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetOrgRole(ctx, "w-owner", joined.Worker, domain.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RevokeInvitation(ctx, "w-owner", revoked.ID); err != nil {
		t.Fatal(err)
	}
	first := t.TempDir()
	if _, err := orgdir.Export(ctx, st, first, registry); err != nil {
		t.Fatal(err)
	}
	st2 := storetest.New(t)
	rep, err := orgdir.Import(ctx, st2, first, orgdir.ImportOptions{Settings: registry, Tools: []string{"publish"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts["org roles"] != 3 || rep.Counts["invitations"] != 3 {
		t.Errorf("counts = %v", rep.Counts)
	}
	if role, _ := st2.OrgRole(ctx, joined.Worker); role != domain.RoleViewer {
		t.Errorf("%s is %q after the import, want viewer", joined.Worker, role)
	}
	if _, sess, err := st2.SignInWithEmail(ctx, "ada@example.com", time.Hour); err != nil || sess.WorkerID != joined.Worker {
		t.Errorf("the joined person signs in as %+v, %v", sess, err)
	}
	if _, _, err := st2.SignInWithEmail(ctx, "cy@example.com", time.Hour); !errors.Is(err, store.ErrInviteRevoked) {
		t.Errorf("the revoked invitation after the import: %v", err)
	}
	if got, err := st2.GetInvitation(ctx, pending.ID); err != nil || got.Status != store.InvitePending || got.Role != "admin" {
		t.Errorf("the pending invitation after the import = %+v, %v", got, err)
	}
	second := t.TempDir()
	if _, err := orgdir.Export(ctx, st2, second, registry); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"org_roles.yaml", "invitations.yaml"} {
		a, _ := os.ReadFile(filepath.Join(first, name))
		b, _ := os.ReadFile(filepath.Join(second, name))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs after the round trip, or is empty:\n%s\n---\n%s", name, a, b)
		}
	}
}
