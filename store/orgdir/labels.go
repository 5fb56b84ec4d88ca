package orgdir

import "github.com/helixml/helix-org/domain"

// labelRecord is a domain.Label as a record file holds it: absent when it
// is bottom (trusted, readable by the org); readers absent for the org and
// [] for nobody.
type labelRecord struct {
	Untrusted bool      `yaml:"untrusted,omitempty"`
	Origin    string    `yaml:"origin,omitempty"`
	Readers   *[]string `yaml:"readers,omitempty"`
	Narrowed  string    `yaml:"narrowed,omitempty"`
	By        []string  `yaml:"by,omitempty"`
}

func labelRecordOf(l domain.Label) *labelRecord {
	if l.IsZero() {
		return nil
	}
	r := &labelRecord{Untrusted: l.Untrusted, Origin: l.Origin, Narrowed: l.Narrowed, By: l.By}
	if l.Readers != nil {
		readers := l.Readers
		r.Readers = &readers
	}
	return r
}

func (r *labelRecord) label() domain.Label {
	if r == nil {
		return domain.Label{}
	}
	l := domain.Label{Untrusted: r.Untrusted, Origin: r.Origin, Narrowed: r.Narrowed, By: r.By}
	if r.Readers != nil {
		l.Readers = *r.Readers
		if l.Readers == nil {
			l.Readers = []string{}
		}
	}
	return l
}
