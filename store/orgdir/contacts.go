package orgdir

import (
	"github.com/helixml/helix-org/store"
)

// contacts.yaml: each human worker's contact channel (set_contact), by
// worker. Its stream, s-contact-<worker>, is in streams.yaml.
var contactsKind = kind{name: "contacts", export: exportContacts, load: loadContacts}

type contactRecord struct {
	Worker    string `yaml:"worker"`
	Kind      string `yaml:"kind"`
	Address   string `yaml:"address"`
	UpdatedBy string `yaml:"updatedBy,omitempty"`
	UpdatedAt string `yaml:"updatedAt"`
}

func exportContacts(x *exporter) error {
	cs, err := x.st.ExportContacts(x.ctx)
	if err != nil || len(cs) == 0 {
		return err
	}
	out := make([]contactRecord, len(cs))
	for i, c := range cs {
		out[i] = contactRecord{Worker: c.Worker, Kind: c.Kind, Address: c.Address, UpdatedBy: c.UpdatedBy, UpdatedAt: stamp(c.UpdatedAt)}
	}
	return x.yaml("contacts.yaml", out)
}

func loadContacts(in *importer) error {
	var recs []contactRecord
	if err := in.yaml("contacts.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		at, err := parseStamp("contact of "+r.Worker+": updatedAt", r.UpdatedAt)
		if err != nil {
			return err
		}
		if err := in.im.Contact(store.WorkerContact{Worker: r.Worker, Contact: store.Contact{Kind: r.Kind, Address: r.Address},
			UpdatedBy: r.UpdatedBy, UpdatedAt: at}); err != nil {
			return err
		}
	}
	return nil
}
