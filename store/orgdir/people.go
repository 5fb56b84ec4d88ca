package orgdir

import (
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// org_roles.yaml: each person's org role where one was set (set_org_role);
// a person without one is a member, the owner always an admin.
var orgRolesKind = kind{name: "org roles", export: exportOrgRoles, load: loadOrgRoles}

type orgRoleRecord struct {
	Worker    string `yaml:"worker"`
	Role      string `yaml:"role"`
	UpdatedBy string `yaml:"updatedBy,omitempty"`
	UpdatedAt string `yaml:"updatedAt"`
}

func exportOrgRoles(x *exporter) error {
	rs, err := x.st.ExportOrgRoles(x.ctx)
	if err != nil || len(rs) == 0 {
		return err
	}
	out := make([]orgRoleRecord, len(rs))
	for i, r := range rs {
		out[i] = orgRoleRecord{Worker: r.Worker, Role: string(r.Role), UpdatedBy: r.UpdatedBy, UpdatedAt: stamp(r.UpdatedAt)}
	}
	return x.yaml("org_roles.yaml", out)
}

func loadOrgRoles(in *importer) error {
	var recs []orgRoleRecord
	if err := in.yaml("org_roles.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		at, err := parseStamp("org role of "+r.Worker+": updatedAt", r.UpdatedAt)
		if err != nil {
			return err
		}
		if err := in.im.OrgRole(store.WorkerOrgRole{Worker: r.Worker, Role: domain.OrgRole(r.Role), UpdatedBy: r.UpdatedBy, UpdatedAt: at}); err != nil {
			return err
		}
	}
	return nil
}

// invitations.yaml: every invitation (invite) with its state, so a
// pending one stays pending — expiring, revocable — in the copy.
var invitationsKind = kind{name: "invitations", export: exportInvitations, load: loadInvitations}

type invitationRecord struct {
	ID         string `yaml:"id"`
	Email      string `yaml:"email"`
	Worker     string `yaml:"worker"`
	Role       string `yaml:"role"`
	InvitedBy  string `yaml:"invitedBy"`
	CreatedAt  string `yaml:"createdAt"`
	SentAt     string `yaml:"sentAt"`
	ExpiresAt  string `yaml:"expiresAt"`
	AcceptedAt string `yaml:"acceptedAt,omitempty"`
	RevokedAt  string `yaml:"revokedAt,omitempty"`
}

func exportInvitations(x *exporter) error {
	invs, err := x.st.ExportInvitations(x.ctx)
	if err != nil || len(invs) == 0 {
		return err
	}
	out := make([]invitationRecord, len(invs))
	for i, v := range invs {
		out[i] = invitationRecord{ID: v.ID, Email: v.Email, Worker: v.Worker, Role: v.Role, InvitedBy: v.InvitedBy,
			CreatedAt: stamp(v.CreatedAt), SentAt: stamp(v.SentAt), ExpiresAt: stamp(v.ExpiresAt)}
		out[i].AcceptedAt, out[i].RevokedAt = stampPtr(v.AcceptedAt), stampPtr(v.RevokedAt)
	}
	return x.yaml("invitations.yaml", out)
}

func loadInvitations(in *importer) error {
	var recs []invitationRecord
	if err := in.yaml("invitations.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		inv := store.Invitation{ID: r.ID, Email: r.Email, Worker: r.Worker, Role: r.Role, InvitedBy: r.InvitedBy}
		what := "invitation " + r.ID + ": "
		var err error
		for _, f := range []struct {
			name string
			raw  string
			to   *time.Time
		}{{"createdAt", r.CreatedAt, &inv.CreatedAt}, {"sentAt", r.SentAt, &inv.SentAt}, {"expiresAt", r.ExpiresAt, &inv.ExpiresAt}} {
			if *f.to, err = parseStamp(what+f.name, f.raw); err != nil {
				return err
			}
		}
		if inv.AcceptedAt, err = parseStampPtr(what+"acceptedAt", r.AcceptedAt); err != nil {
			return err
		}
		if inv.RevokedAt, err = parseStampPtr(what+"revokedAt", r.RevokedAt); err != nil {
			return err
		}
		if err := in.im.Invitation(inv); err != nil {
			return err
		}
	}
	return nil
}
