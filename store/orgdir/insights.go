package orgdir

import (
	"time"

	"github.com/helixml/helix-org/domain"
)

// insights.yaml: every version of every insight, with its counters, and
// the links between them. Which runs were shown which insight is run
// history and stays behind.
var insightsKind = kind{name: "insights", export: exportInsights, load: loadInsights}

type insightsFile struct {
	Insights []insightRecord `yaml:"insights"`
	Links    []linkRecord    `yaml:"links,omitempty"`
}

type insightRecord struct {
	ID           string   `yaml:"id"`
	Version      int      `yaml:"version"`
	Trigger      string   `yaml:"trigger"`
	Resolution   string   `yaml:"resolution"`
	Type         string   `yaml:"type"`
	Tags         []string `yaml:"tags,omitempty"`
	Scope        string   `yaml:"scope"`
	Target       string   `yaml:"target,omitempty"`
	StoredBy     string   `yaml:"storedBy"`
	Activation   string   `yaml:"activation,omitempty"`
	Supersedes   string   `yaml:"supersedes,omitempty"`
	SupersededBy string   `yaml:"supersededBy,omitempty"`
	Retired      bool     `yaml:"retired,omitempty"`
	Reason       string   `yaml:"reason,omitempty"`
	Injected     int      `yaml:"injected"`
	Utilized     int      `yaml:"utilized"`
	Helped       int      `yaml:"helped"`
	Failed       int      `yaml:"failed"`
	CreditHelped float64  `yaml:"creditHelped"`
	CreditFailed float64  `yaml:"creditFailed"`
	LastUsed     string   `yaml:"lastUsed,omitempty"`
	CreatedAt    string   `yaml:"createdAt"`
	// Label is the storing run's: untrusted is quarantined until endorsed.
	Label      *labelRecord `yaml:"label,omitempty"`
	EndorsedBy string       `yaml:"endorsedBy,omitempty"`
	EndorsedAt string       `yaml:"endorsedAt,omitempty"`
}

type linkRecord struct {
	From       string  `yaml:"from"`
	To         string  `yaml:"to"`
	Kind       string  `yaml:"kind"`
	Similarity float64 `yaml:"similarity,omitempty"`
}

func exportInsights(x *exporter) error {
	ins, links, err := x.st.ExportInsights(x.ctx)
	if err != nil || len(ins) == 0 {
		return err
	}
	var f insightsFile
	for _, in := range ins {
		s := in.Stats
		r := insightRecord{ID: in.ID, Version: in.Version, Trigger: in.Trigger, Resolution: in.Resolution, Type: string(in.Type), Tags: in.Tags,
			Scope: string(in.Scope), Target: in.Target, StoredBy: in.StoredBy, Activation: in.Activation, Supersedes: in.Supersedes,
			SupersededBy: in.SupersededBy, Retired: in.Retired, Reason: in.Reason, Injected: s.Injected, Utilized: s.Utilized, Helped: s.Helped,
			Failed: s.Failed, CreditHelped: s.CreditHelped, CreditFailed: s.CreditFailed, CreatedAt: stamp(in.CreatedAt)}
		if !s.LastUsed.IsZero() {
			r.LastUsed = stamp(s.LastUsed)
		}
		r.Label, r.EndorsedBy = labelRecordOf(in.Label), in.EndorsedBy
		if in.EndorsedAt != nil {
			r.EndorsedAt = stamp(*in.EndorsedAt)
		}
		f.Insights = append(f.Insights, r)
	}
	for _, l := range links {
		f.Links = append(f.Links, linkRecord{From: l.From, To: l.To, Kind: string(l.Kind), Similarity: l.Similarity})
	}
	return x.yaml("insights.yaml", f)
}

func loadInsights(in *importer) error {
	var f insightsFile
	if err := in.yaml("insights.yaml", &f); err != nil {
		return err
	}
	for _, r := range f.Insights {
		created, err := parseStamp("insight "+r.ID+": createdAt", r.CreatedAt)
		if err != nil {
			return err
		}
		var last time.Time
		if r.LastUsed != "" {
			if last, err = parseStamp("insight "+r.ID+": lastUsed", r.LastUsed); err != nil {
				return err
			}
		}
		var endorsed *time.Time
		if r.EndorsedAt != "" {
			at, err := parseStamp("insight "+r.ID+": endorsedAt", r.EndorsedAt)
			if err != nil {
				return err
			}
			endorsed = &at
		}
		if err := in.im.Insight(domain.Insight{ID: r.ID, Version: r.Version, Trigger: r.Trigger, Resolution: r.Resolution, Type: domain.InsightType(r.Type),
			Tags: r.Tags, Scope: domain.InsightScope(r.Scope), Target: r.Target, StoredBy: r.StoredBy, Activation: r.Activation, Supersedes: r.Supersedes,
			SupersededBy: r.SupersededBy, Retired: r.Retired, Reason: r.Reason, CreatedAt: created,
			Stats: domain.InsightStats{Injected: r.Injected, Utilized: r.Utilized, Helped: r.Helped, Failed: r.Failed,
				CreditHelped: r.CreditHelped, CreditFailed: r.CreditFailed, LastUsed: last},
			Label: r.Label.label(), EndorsedBy: r.EndorsedBy, EndorsedAt: endorsed}); err != nil {
			return err
		}
	}
	for _, l := range f.Links {
		if err := in.im.InsightLink(domain.InsightLink{From: l.From, To: l.To, Kind: domain.InsightLinkKind(l.Kind), Similarity: l.Similarity}, ""); err != nil {
			return err
		}
	}
	return nil
}
