// Package orgdir writes an organisation out as a directory of readable
// files — roles and workers as markdown with front matter, the rest as
// YAML, skills with their source — and reads one back into a new
// database. The same org always gives the same bytes: records are sorted,
// times are the records' own, and nothing that changes as the server runs
// (events, runs, tokens, skill images) is written.
//
// Secrets are never written: transport secrets in stream configs and
// secret settings are left out and listed, and an import takes them from
// a separate file or says what is still to be set.
//
// A kind of record is one file here (its kind value, listed in kinds) and
// one store.Importer method.
package orgdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// kind is one kind of record: how it is written out and read back.
type kind struct {
	name   string
	export func(*exporter) error
	load   func(*importer) error
}

// kinds in the order they are written and read.
var kinds = []kind{rolesKind, positionsKind, workersKind, grantsKind, streamsKind, subscriptionsKind, skillsKind, configKind, insightsKind,
	budgetsKind, contactsKind, orgRolesKind, invitationsKind}

// Secrets are the values an export leaves out, given back on import:
// stream id → transport config field → value, and config key → value.
type Secrets struct {
	Streams map[string]map[string]string `json:"streams,omitempty"`
	Config  map[string]string            `json:"config,omitempty"`
}

// Report says what an export or import did.
type Report struct {
	// Counts is records written per kind (import).
	Counts map[string]int
	// Secrets lists the secrets left out (export), or still to be set
	// (import), one line each.
	Secrets []string
}

type exporter struct {
	ctx      context.Context
	st       *store.Store
	dir      string
	settings domain.Settings
	secrets  []string
}

// Export writes st's org into dir, which must be empty or not exist.
// settings is the registry of config keys.
func Export(ctx context.Context, st *store.Store, dir string, settings domain.Settings) (Report, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Report{}, fmt.Errorf("export to %s: the directory is not empty; choose a new one", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Report{}, fmt.Errorf("export: %w", err)
	}
	x := &exporter{ctx: ctx, st: st, dir: dir, settings: settings}
	for _, k := range kinds {
		if err := k.export(x); err != nil {
			return Report{}, fmt.Errorf("export %s: %w", k.name, err)
		}
	}
	if err := x.write("README.txt", readme(x.secrets)); err != nil {
		return Report{}, err
	}
	return Report{Secrets: x.secrets}, nil
}

// write writes one file under the export directory, owner-only: an org's
// roles and identities are its own business.
func (x *exporter) write(rel string, data []byte) error {
	path := filepath.Join(x.dir, filepath.FromSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("refusing to write %q outside the export", rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func (x *exporter) yaml(rel string, v any) error {
	b, err := marshalYAML(v)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return x.write(rel, b)
}

// secret notes a secret left out of the export.
func (x *exporter) secret(format string, args ...any) {
	x.secrets = append(x.secrets, fmt.Sprintf(format, args...))
}

type importer struct {
	dir       string
	im        *store.Importer
	settings  domain.Settings
	given     Secrets
	used      map[string]bool
	missing   []string
	allowExec bool
	// What checkOrg holds the export to, gathered as it is read.
	tools     []string
	positions []domain.Position
	workers   map[string]workerSeen
	grants    []domain.Grant
	skills    map[string]string // skill tool → creator
}

// ImportOptions tune Import.
type ImportOptions struct {
	Settings domain.Settings
	// Secrets fills in what the export left out.
	Secrets Secrets
	// WithoutStreamSecrets imports streams whose transport secrets are
	// not in Secrets without them; otherwise such an import is refused, as
	// no tool can set a stream's secret later.
	WithoutStreamSecrets bool
	// Tools are the built-in tools a grant may name; the export's skills
	// add theirs.
	Tools []string
	// AllowExecSettings applies settings that make the server run code
	// (domain.SettingSpec.RunsCode); without it an export holding one is
	// refused.
	AllowExecSettings bool
}

// Import reads the export in dir into st, which must hold no org yet, in
// one transaction: all of it is imported, or none.
func Import(ctx context.Context, st *store.Store, dir string, opts ImportOptions) (Report, error) {
	if _, err := os.Stat(filepath.Join(dir, "README.txt")); err != nil {
		return Report{}, fmt.Errorf("import from %s: no README.txt there; is it a helix-org export?", dir)
	}
	in := &importer{dir: dir, settings: opts.Settings, given: opts.Secrets, allowExec: opts.AllowExecSettings, tools: opts.Tools}
	counts, err := st.Import(ctx, func(im *store.Importer) error {
		in.im, in.missing, in.used = im, nil, map[string]bool{}
		in.positions, in.workers, in.grants, in.skills = nil, map[string]workerSeen{}, nil, map[string]string{}
		for _, k := range kinds {
			if err := k.load(in); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
		}
		if err := in.checkOrg(st.Now()); err != nil {
			return err
		}
		if err := in.unused(); err != nil {
			return err
		}
		if len(in.missingStreamSecrets()) > 0 && !opts.WithoutStreamSecrets {
			return fmt.Errorf("these stream secrets are not in the export and were not given (--secrets), and no tool can set them later:\n  %s\n"+
				"give them in a secrets file (README.txt shows its form), or import without them (--without-stream-secrets)",
				strings.Join(in.missingStreamSecrets(), "\n  "))
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	return Report{Counts: counts, Secrets: in.missing}, nil
}

func (in *importer) missingStreamSecrets() []string {
	var out []string
	for _, m := range in.missing {
		if strings.HasPrefix(m, "stream ") {
			out = append(out, m)
		}
	}
	return out
}

// unused refuses a secrets file naming what the export does not hold: a
// typo there would otherwise leave a secret unset without a word.
func (in *importer) unused() error {
	var extra []string
	for id, fields := range in.given.Streams {
		for f := range fields {
			if !in.used["stream "+id+" "+f] {
				extra = append(extra, fmt.Sprintf("stream %s field %s", id, f))
			}
		}
	}
	for key := range in.given.Config {
		if !in.used["config "+key] {
			extra = append(extra, "config "+key)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("the secrets file names what the export holds no secret for: %s", strings.Join(extra, ", "))
	}
	return nil
}

// read reads one file of the export; a missing one reads as nothing, so
// an export of an org without, say, skills needs no empty files.
func (in *importer) read(rel string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(in.dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (in *importer) yaml(rel string, v any) error {
	b, err := in.read(rel)
	if err != nil || b == nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// entries lists the names in a directory of the export, sorted: its
// regular files ending in suffix, or (dirs) its directories.
func (in *importer) entries(rel, suffix string, dirs bool) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(in.dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) && (dirs && e.IsDir() || !dirs && e.Type().IsRegular()) {
			out = append(out, e.Name())
		}
	}
	return out, err
}

func marshalYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	err := enc.Close()
	return b.Bytes(), err
}

// stamp is a time as an export writes it: UTC, to the nanosecond.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func stampPtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return stamp(*t)
}

func parseStamp(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", field, s)
	}
	return t.UTC(), nil
}

func parseStampPtr(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := parseStamp(field, s)
	return &t, err
}
