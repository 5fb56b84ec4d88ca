package orgdir

import (
	"fmt"
	"maps"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// config.yaml: the operational config set in the database. Secret
// settings are left out; secrets names them.
var configKind = kind{name: "config", export: exportConfig, load: loadConfig}

type configRecord struct {
	Settings map[string]string `yaml:"settings"`
	Secrets  []string          `yaml:"secrets,omitempty"`
}

func exportConfig(x *exporter) error {
	keys := make([]string, len(x.settings))
	for i, s := range x.settings {
		keys[i] = s.Key
	}
	slices.Sort(keys)
	out := configRecord{Settings: map[string]string{}}
	for _, key := range keys {
		spec, _ := x.settings.Lookup(key)
		v, ok, err := x.st.Setting(x.ctx, key)
		if err != nil {
			return err
		}
		switch {
		case !ok:
		case spec.HasSecret():
			out.Secrets = append(out.Secrets, key)
			x.secret("config %s", key)
		default:
			out.Settings[key] = v
		}
	}
	return x.yaml("config.yaml", out)
}

func loadConfig(in *importer) error {
	var rec configRecord
	if err := in.yaml("config.yaml", &rec); err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(rec.Settings)) {
		spec, err := in.settings.Lookup(key)
		if err != nil {
			return fmt.Errorf("config.yaml: %w", err)
		}
		if spec.HasSecret() {
			return fmt.Errorf("config.yaml: %s is a secret; give it in the secrets file", key)
		}
		if err := in.mayRunCode("config.yaml", spec); err != nil {
			return err
		}
		if err := in.im.Setting(spec, rec.Settings[key]); err != nil {
			return err
		}
	}
	// Secret settings come only from the secrets file.
	for _, key := range slices.Sorted(maps.Keys(in.given.Config)) {
		spec, err := in.settings.Lookup(key)
		if err != nil {
			return fmt.Errorf("secrets file: %w", err)
		}
		if err := in.mayRunCode("secrets file", spec); err != nil {
			return err
		}
		if err := in.im.Setting(spec, in.given.Config[key]); err != nil {
			return fmt.Errorf("secrets file: %w", err)
		}
		in.used["config "+key] = true
	}
	for _, key := range rec.Secrets {
		if _, ok := in.given.Config[key]; !ok {
			in.missing = append(in.missing, "config "+key)
		}
	}
	return nil
}

// mayRunCode refuses a setting that makes the server run code unless the
// import was told to apply such settings: an export can come from anyone.
func (in *importer) mayRunCode(file string, spec domain.SettingSpec) error {
	if !spec.RunsCode || in.allowExec {
		return nil
	}
	return fmt.Errorf("%s: %s makes the server run code (%s); an import applies such settings only with --allow-exec-settings, "+
		"when you trust the export — or remove it and set it yourself with helix-org config set", file, spec.Key, spec.Description)
}
