package orgdir

import (
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// grants.yaml: who may call what, by worker then tool, expired grants too
// (list_grants shows them).
var grantsKind = kind{name: "grants", export: exportGrants, load: loadGrants}

type grantRecord struct {
	Worker    string `yaml:"worker"`
	Tool      string `yaml:"tool"`
	GrantedBy string `yaml:"grantedBy,omitempty"`
	CreatedAt string `yaml:"createdAt"`
	ExpiresAt string `yaml:"expiresAt,omitempty"`
	Approval  string `yaml:"approval,omitempty"`
}

func exportGrants(x *exporter) error {
	ws, err := x.st.ListWorkers(x.ctx, store.WorkerFilter{IncludeDismissed: true})
	if err != nil {
		return err
	}
	out := []grantRecord{}
	for _, w := range ws {
		gs, err := x.st.ListGrants(x.ctx, w.ID)
		if err != nil {
			return err
		}
		for _, g := range gs {
			out = append(out, grantRecord{Worker: g.WorkerID, Tool: g.Tool, GrantedBy: g.GrantedBy, CreatedAt: stamp(g.CreatedAt), ExpiresAt: stampPtr(g.ExpiresAt),
				Approval: string(g.Approval)})
		}
	}
	return x.yaml("grants.yaml", out)
}

func loadGrants(in *importer) error {
	var recs []grantRecord
	if err := in.yaml("grants.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		g := domain.Grant{WorkerID: r.Worker, Tool: r.Tool, GrantedBy: r.GrantedBy, Approval: domain.GrantApproval(r.Approval)}
		if err := g.Approval.Validate("grant " + r.Worker + " " + r.Tool + ": approval"); err != nil {
			return err
		}
		var err error
		if g.CreatedAt, err = parseStamp("grant "+r.Worker+" "+r.Tool+": createdAt", r.CreatedAt); err != nil {
			return err
		}
		if g.ExpiresAt, err = parseStampPtr("grant "+r.Worker+" "+r.Tool+": expiresAt", r.ExpiresAt); err != nil {
			return err
		}
		if err := in.im.Grant(g); err != nil {
			return err
		}
		in.grants = append(in.grants, g)
	}
	return nil
}
