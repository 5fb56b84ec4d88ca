package orgdir

import (
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// streams.yaml: every stream — the org's own, activation logs, inboxes and
// DMs too, since subscriptions and reading rights refer to them, and
// archived ones, which stay archived — with its transport config minus
// secrets. A record's secrets lists the fields left
// out.
var streamsKind = kind{name: "streams", export: exportStreams, load: loadStreams}

type streamRecord struct {
	ID          string         `yaml:"id"`
	Name        string         `yaml:"name"`
	Description string         `yaml:"description,omitempty"`
	Kind        string         `yaml:"kind"`
	Config      map[string]any `yaml:"config,omitempty"`
	Secrets     []string       `yaml:"secrets,omitempty"`
	CreatedBy   string         `yaml:"createdBy,omitempty"`
	CreatedAt   string         `yaml:"createdAt"`
	Private     bool           `yaml:"private,omitempty"`
	ArchivedAt  string         `yaml:"archivedAt,omitempty"`
}

func exportStreams(x *exporter) error {
	ss, err := x.st.ListAllStreams(x.ctx, "")
	if err != nil {
		return err
	}
	out := make([]streamRecord, 0, len(ss))
	for _, s := range ss {
		full, err := x.st.StreamWithSecrets(x.ctx, s.ID)
		if err != nil {
			return err
		}
		rec := streamRecord{ID: s.ID, Name: s.Name, Description: s.Description, Kind: string(s.Transport.Kind), CreatedBy: s.CreatedBy, CreatedAt: stamp(s.CreatedAt),
			Private: s.Private, ArchivedAt: stampPtr(s.ArchivedAt)}
		if len(full.Transport.Config) > 0 {
			if err := json.Unmarshal(full.Transport.Config, &rec.Config); err != nil {
				return fmt.Errorf("stream %s: transport config: %w", s.ID, err)
			}
		}
		for _, f := range x.st.Transports().Secrets(full.Transport.Kind) {
			if v, ok := rec.Config[f]; ok && v != "" {
				delete(rec.Config, f)
				rec.Secrets = append(rec.Secrets, f)
				x.secret("stream %s (%s): transport config field %q", s.ID, s.Transport.Kind, f)
			}
		}
		out = append(out, rec)
	}
	return x.yaml("streams.yaml", out)
}

func loadStreams(in *importer) error {
	var recs []streamRecord
	if err := in.yaml("streams.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		cfg := r.Config
		if cfg == nil {
			cfg = map[string]any{}
		}
		for _, f := range r.Secrets {
			if v, ok := in.given.Streams[r.ID][f]; ok {
				cfg[f] = v
				in.used["stream "+r.ID+" "+f] = true
				continue
			}
			in.missing = append(in.missing, fmt.Sprintf("stream %s (%s): transport config field %q", r.ID, r.Kind, f))
		}
		raw, err := json.Marshal(cfg)
		if err != nil {
			return fmt.Errorf("stream %s: config: %w", r.ID, err)
		}
		created, err := parseStamp("stream "+r.ID+": createdAt", r.CreatedAt)
		if err != nil {
			return err
		}
		archived, err := parseStampPtr("stream "+r.ID+": archivedAt", r.ArchivedAt)
		if err != nil {
			return err
		}
		st := domain.Stream{ID: r.ID, Name: r.Name, Description: r.Description, CreatedBy: r.CreatedBy, CreatedAt: created,
			Transport: domain.Transport{Kind: domain.TransportKind(r.Kind), Config: raw}, Private: r.Private, ArchivedAt: archived}
		if err := in.im.Stream(st); err != nil {
			return err
		}
	}
	return nil
}
