package orgdir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// skills/<name>/: skill.yaml (the serving version), and per version
// v<N>/version.yaml, input-schema.json, examples.json and files/ — the
// build context as built. Images are not exported: an imported skill is
// built again from its source.
var skillsKind = kind{name: "skills", export: exportSkills, load: loadSkills}

type skillRecord struct {
	Name      string `yaml:"name"`
	Version   int    `yaml:"version"`
	CreatedBy string `yaml:"createdBy,omitempty"`
	CreatedAt string `yaml:"createdAt"`
}

type versionRecord struct {
	Version     int    `yaml:"version"`
	Status      string `yaml:"status"`
	Error       string `yaml:"error,omitempty"`
	Description string `yaml:"description"`
	Template    string `yaml:"template,omitempty"`
	CreatedBy   string `yaml:"createdBy,omitempty"`
	CreatedAt   string `yaml:"createdAt"`
}

func exportSkills(x *exporter) error {
	sks, err := x.st.ListSkills(x.ctx)
	if err != nil {
		return err
	}
	for _, sk := range sks {
		dir := "skills/" + sk.Name + "/"
		if err := x.yaml(dir+"skill.yaml", skillRecord{Name: sk.Name, Version: sk.Version, CreatedBy: sk.CreatedBy, CreatedAt: stamp(sk.CreatedAt)}); err != nil {
			return err
		}
		vs, err := x.st.SkillVersions(x.ctx, sk.Name)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v, err = x.st.GetSkillVersion(x.ctx, sk.Name, v.Version); err != nil {
				return err
			}
			if err := exportVersion(x, fmt.Sprintf("%sv%d/", dir, v.Version), v); err != nil {
				return err
			}
		}
	}
	return nil
}

func exportVersion(x *exporter, dir string, v domain.SkillVersion) error {
	rec := versionRecord{Version: v.Version, Status: string(v.Status), Error: v.Error, Description: v.Description, Template: v.Template,
		CreatedBy: v.CreatedBy, CreatedAt: stamp(v.CreatedAt)}
	if err := x.yaml(dir+"version.yaml", rec); err != nil {
		return err
	}
	if len(v.InputSchema) > 0 {
		if err := x.json(dir+"input-schema.json", v.InputSchema); err != nil {
			return err
		}
	}
	if len(v.Examples) > 0 {
		b, err := json.Marshal(v.Examples)
		if err != nil {
			return err
		}
		if err := x.json(dir+"examples.json", b); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.Files)) {
		if err := x.write(dir+"files/"+name, []byte(v.Files[name])); err != nil {
			return fmt.Errorf("skill %s version %d: %w", v.Name, v.Version, err)
		}
	}
	return nil
}

// json writes raw JSON indented, whatever its stored spacing.
func (x *exporter) json(rel string, raw []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	b.WriteByte('\n')
	return x.write(rel, b.Bytes())
}

func loadSkills(in *importer) error {
	names, err := in.entries("skills", "", true)
	if err != nil {
		return err
	}
	for _, name := range names {
		dir := "skills/" + name + "/"
		var rec skillRecord
		if err := in.yaml(dir+"skill.yaml", &rec); err != nil {
			return err
		}
		created, err := parseStamp(dir+"skill.yaml: createdAt", rec.CreatedAt)
		if err != nil {
			return err
		}
		versions, err := loadVersions(in, dir)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(versions, func(v domain.SkillVersion) bool { return v.Version == rec.Version })
		if i < 0 {
			return fmt.Errorf("%sskill.yaml: serving version %d has no v%d directory", dir, rec.Version, rec.Version)
		}
		serving := versions[i]
		sk := domain.Skill{Name: rec.Name, Version: rec.Version, Description: serving.Description, InputSchema: serving.InputSchema,
			Template: serving.Template, CreatedBy: rec.CreatedBy, CreatedAt: created}
		in.skills[sk.ToolName()] = sk.CreatedBy
		if err := in.im.Skill(sk, versions); err != nil {
			return fmt.Errorf("skill %s: %w", name, err)
		}
	}
	return nil
}

func loadVersions(in *importer, dir string) ([]domain.SkillVersion, error) {
	vdirs, err := in.entries(strings.TrimSuffix(dir, "/"), "", true)
	if err != nil {
		return nil, err
	}
	var out []domain.SkillVersion
	for _, vd := range vdirs {
		if _, err := strconv.Atoi(strings.TrimPrefix(vd, "v")); err != nil || !strings.HasPrefix(vd, "v") {
			return nil, fmt.Errorf("%s%s: not a version directory (v<N>)", dir, vd)
		}
		vdir := dir + vd + "/"
		var rec versionRecord
		if err := in.yaml(vdir+"version.yaml", &rec); err != nil {
			return nil, err
		}
		v := domain.SkillVersion{Name: strings.TrimSuffix(strings.TrimPrefix(dir, "skills/"), "/"), Version: rec.Version,
			Status: domain.SkillVersionStatus(rec.Status), Error: rec.Error, Description: rec.Description, Template: rec.Template, CreatedBy: rec.CreatedBy}
		if v.CreatedAt, err = parseStamp(vdir+"version.yaml: createdAt", rec.CreatedAt); err != nil {
			return nil, err
		}
		if v.InputSchema, err = in.compactJSON(vdir + "input-schema.json"); err != nil {
			return nil, err
		}
		examples, err := in.compactJSON(vdir + "examples.json")
		if err != nil {
			return nil, err
		}
		if examples != nil {
			if err := json.Unmarshal(examples, &v.Examples); err != nil {
				return nil, fmt.Errorf("%sexamples.json: %w", vdir, err)
			}
		}
		if v.Files, err = in.tree(vdir + "files"); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// compactJSON reads a JSON file of the export, compacted; nil if absent.
func (in *importer) compactJSON(rel string) (json.RawMessage, error) {
	b, err := in.read(rel)
	if err != nil || b == nil {
		return nil, err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return c.Bytes(), nil
}

// tree reads every file under a directory of the export, keyed by its
// slash-separated path below it; nil if there is no such directory.
func (in *importer) tree(rel string) (map[string]string, error) {
	root := filepath.Join(in.dir, filepath.FromSlash(rel))
	if _, err := os.Stat(root); err != nil {
		return nil, nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		name, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(name)] = string(b)
		return nil
	})
	return out, err
}
