package orgdir

import (
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// roles/<id>.md: the job description, its metadata in front matter.
var rolesKind = kind{name: "roles", export: exportRoles, load: loadRoles}

type roleMeta struct {
	ID        string `yaml:"id"`
	Title     string `yaml:"title"`
	CreatedBy string `yaml:"createdBy,omitempty"`
	CreatedAt string `yaml:"createdAt"`
	UpdatedAt string `yaml:"updatedAt"`
}

func exportRoles(x *exporter) error {
	roles, err := x.st.ListRoles(x.ctx)
	if err != nil {
		return err
	}
	for _, r := range roles {
		creator, err := x.st.RoleCreator(x.ctx, r.ID)
		if err != nil {
			return err
		}
		b, err := withFrontMatter(roleMeta{ID: r.ID, Title: r.Title, CreatedBy: creator, CreatedAt: stamp(r.CreatedAt), UpdatedAt: stamp(r.UpdatedAt)}, r.Content)
		if err != nil {
			return err
		}
		if err := x.write("roles/"+r.ID+".md", b); err != nil {
			return err
		}
	}
	return nil
}

func loadRoles(in *importer) error {
	names, err := in.entries("roles", ".md", false)
	if err != nil {
		return err
	}
	for _, name := range names {
		data, err := in.read("roles/" + name)
		if err != nil {
			return err
		}
		var m roleMeta
		content, err := splitFrontMatter(data, &m)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r := domain.Role{ID: m.ID, Title: m.Title, Content: content}
		if r.CreatedAt, err = parseStamp(name+": createdAt", m.CreatedAt); err != nil {
			return err
		}
		if r.UpdatedAt, err = parseStamp(name+": updatedAt", m.UpdatedAt); err != nil {
			return err
		}
		if m.ID == "" {
			return fmt.Errorf("%s: id is required", name)
		}
		if err := in.im.Role(r, m.CreatedBy); err != nil {
			return err
		}
	}
	return nil
}
