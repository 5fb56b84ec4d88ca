package orgdir

import "github.com/helixml/helix-org/domain"

// positions.yaml: every seat, by id.
var positionsKind = kind{name: "positions", export: exportPositions, load: loadPositions}

type positionRecord struct {
	ID        string `yaml:"id"`
	Role      string `yaml:"role"`
	Title     string `yaml:"title"`
	ReportsTo string `yaml:"reportsTo,omitempty"`
	CreatedAt string `yaml:"createdAt"`
}

func exportPositions(x *exporter) error {
	ps, err := x.st.ListPositions(x.ctx)
	if err != nil {
		return err
	}
	out := make([]positionRecord, len(ps))
	for i, p := range ps {
		out[i] = positionRecord{ID: p.ID, Role: p.RoleID, Title: p.Title, ReportsTo: p.ReportsTo, CreatedAt: stamp(p.CreatedAt)}
	}
	return x.yaml("positions.yaml", out)
}

func loadPositions(in *importer) error {
	var recs []positionRecord
	if err := in.yaml("positions.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		created, err := parseStamp("position "+r.ID+": createdAt", r.CreatedAt)
		if err != nil {
			return err
		}
		p := domain.Position{ID: r.ID, RoleID: r.Role, Title: r.Title, ReportsTo: r.ReportsTo, CreatedAt: created}
		if err := in.im.Position(p); err != nil {
			return err
		}
		in.positions = append(in.positions, p)
	}
	return nil
}
