package orgdir

import (
	"fmt"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// workers/<id>.md: the identity, the rest in front matter. Dismissed
// workers are kept: their history and what they created refer to them.
var workersKind = kind{name: "workers", export: exportWorkers, load: loadWorkers}

type workerMeta struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Kind        string `yaml:"kind"`
	Position    string `yaml:"position"`
	HiredBy     string `yaml:"hiredBy,omitempty"`
	HiredAt     string `yaml:"hiredAt"`
	DismissedAt string `yaml:"dismissedAt,omitempty"`
}

func exportWorkers(x *exporter) error {
	ws, err := x.st.ListWorkers(x.ctx, store.WorkerFilter{IncludeDismissed: true})
	if err != nil {
		return err
	}
	for _, w := range ws {
		b, err := withFrontMatter(workerMeta{ID: w.ID, Name: w.Name, Kind: string(w.Kind), Position: w.PositionID, HiredBy: w.HiredBy,
			HiredAt: stamp(w.HiredAt), DismissedAt: stampPtr(w.DismissedAt)}, w.Identity)
		if err != nil {
			return err
		}
		if err := x.write("workers/"+w.ID+".md", b); err != nil {
			return err
		}
	}
	return nil
}

func loadWorkers(in *importer) error {
	names, err := in.entries("workers", ".md", false)
	if err != nil {
		return err
	}
	for _, name := range names {
		data, err := in.read("workers/" + name)
		if err != nil {
			return err
		}
		var m workerMeta
		identity, err := splitFrontMatter(data, &m)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if m.ID == "" {
			return fmt.Errorf("%s: id is required", name)
		}
		w := domain.Worker{ID: m.ID, Name: m.Name, Kind: domain.WorkerKind(m.Kind), PositionID: m.Position, HiredBy: m.HiredBy, Identity: identity}
		if w.HiredAt, err = parseStamp(name+": hiredAt", m.HiredAt); err != nil {
			return err
		}
		if w.DismissedAt, err = parseStampPtr(name+": dismissedAt", m.DismissedAt); err != nil {
			return err
		}
		if err := in.im.Worker(w); err != nil {
			return err
		}
		in.workers[w.ID] = workerSeen{file: "workers/" + name, w: w}
	}
	return nil
}
