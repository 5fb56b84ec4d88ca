package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Label is what the server knows of a piece of data, so that policy can
// follow the data instead of trusting a model to: its integrity (trusted,
// or untrusted since a named item from outside) and its readers (the whole
// org, or a set of workers). Every stored event, insight, attachment,
// skill, spec document and activation carries one; a run's label is the
// join of everything it has read, and what it writes carries it on.
//
// The zero Label — trusted, readable by the org — is bottom: existing rows
// and hot paths carry nothing.
type Label struct {
	// Untrusted data came from outside the org (an inbound transport), or
	// from something that read such data. Origin names the first item that
	// made it so, e.g. `webhook event e-… on s-hooks from "x"`.
	Untrusted bool   `json:"untrusted,omitempty"`
	Origin    string `json:"origin,omitempty"`
	// Readers are who may see it: nil is the whole org, else exactly these
	// workers, sorted (an empty, non-nil set is nobody).
	Readers []string `json:"readers,omitempty"`
	// Narrowed names the first item that narrowed Readers; By are the
	// sources of every item that did (a worker id, or Outside or System),
	// which the person's-own-words rule reads.
	Narrowed string   `json:"narrowed,omitempty"`
	By       []string `json:"by,omitempty"`
}

// The sources of narrowing items that no worker wrote.
const (
	BySystem  = "system"
	ByOutside = "outside"
)

// Untrusted returns the label of data that came from outside.
func Untrusted(origin string) Label { return Label{Untrusted: true, Origin: origin} }

// ReadBy returns the label of an item readable only by readers, written by
// by; item names it for Narrowed.
func ReadBy(readers []string, item, by string) Label {
	r := slices.Clone(readers)
	slices.Sort(r)
	r = slices.Compact(r)
	if r == nil {
		r = []string{}
	}
	return Label{Readers: r, Narrowed: item, By: []string{by}}
}

// IsZero reports whether l is bottom: trusted and readable by the org.
func (l Label) IsZero() bool { return !l.Untrusted && l.Readers == nil }

// Scoped reports whether l's readers are a set of workers, not the org.
func (l Label) Scoped() bool { return l.Readers != nil }

// Join is the least label above both: untrusted if either is (the first
// origin kept), readable by those who may read both. It is monotone, so a
// run's label only ever rises.
func (l Label) Join(o Label) Label {
	out := l
	if !l.Untrusted && o.Untrusted {
		out.Untrusted, out.Origin = true, o.Origin
	}
	switch {
	case o.Readers == nil:
	case l.Readers == nil:
		out.Readers, out.Narrowed = slices.Clone(o.Readers), o.Narrowed
	default:
		out.Readers = intersect(l.Readers, o.Readers)
	}
	if o.Readers != nil {
		out.By = union(l.By, o.By)
	}
	return out
}

// Equal reports whether two labels say the same: the same integrity and
// readers, narrowed by the same sources. Origins and Narrowed, which only
// name the first cause, do not count.
func (l Label) Equal(o Label) bool {
	return l.Untrusted == o.Untrusted && (l.Readers == nil) == (o.Readers == nil) &&
		slices.Equal(l.Readers, o.Readers) && slices.Equal(l.By, o.By)
}

// Declassified is l readable by the org again: what a person in its
// readers decided may be shared. Integrity is not a person's to change.
func (l Label) Declassified() Label {
	l.Readers, l.Narrowed, l.By = nil, "", nil
	return l
}

// Endorsed is l trusted again: a person vouched for the data.
func (l Label) Endorsed() Label {
	l.Untrusted, l.Origin = false, ""
	return l
}

// Within reports whether an audience may see what carries l: audience nil
// is the whole org (or the outside world), which only an org-readable
// label allows; a set must be among l's readers.
func (l Label) Within(audience []string) bool {
	if l.Readers == nil {
		return true
	}
	if audience == nil {
		return false
	}
	for _, w := range audience {
		if !slices.Contains(l.Readers, w) {
			return false
		}
	}
	return true
}

// OwnWords reports whether everything that narrowed l was written by
// person — trusted words of one person, which are theirs to share.
func (l Label) OwnWords(person string) bool {
	if l.Untrusted || person == "" || len(l.By) == 0 {
		return false
	}
	for _, b := range l.By {
		if b != person {
			return false
		}
	}
	return true
}

// String says the label in a line, for approvals, logs and the UI.
func (l Label) String() string {
	var parts []string
	if l.Untrusted {
		parts = append(parts, "untrusted: "+l.Origin)
	} else {
		parts = append(parts, "trusted")
	}
	if l.Readers != nil {
		r := "nobody"
		if len(l.Readers) > 0 {
			r = strings.Join(l.Readers, ", ")
		}
		parts = append(parts, fmt.Sprintf("readers %s (since %s)", r, l.Narrowed))
	}
	return strings.Join(parts, "; ")
}

// labelJSON is a label as stored and shown: fields left out when empty,
// readers a pointer so the org (absent) and nobody ([]) differ.
type labelJSON struct {
	Untrusted bool      `json:"untrusted,omitempty"`
	Origin    string    `json:"origin,omitempty"`
	Readers   *[]string `json:"readers,omitempty"`
	Narrowed  string    `json:"narrowed,omitempty"`
	By        []string  `json:"by,omitempty"`
}

func (l Label) MarshalJSON() ([]byte, error) {
	j := labelJSON{Untrusted: l.Untrusted, Origin: l.Origin, Narrowed: l.Narrowed, By: l.By}
	if l.Readers != nil {
		r := l.Readers
		j.Readers = &r
	}
	return json.Marshal(j)
}

func (l *Label) UnmarshalJSON(b []byte) error {
	var j labelJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = Label{Untrusted: j.Untrusted, Origin: j.Origin, Narrowed: j.Narrowed, By: j.By}
	if j.Readers != nil {
		l.Readers = *j.Readers
		if l.Readers == nil {
			l.Readers = []string{}
		}
	}
	return nil
}

// Encode is the label as a column stores it: "" for bottom, else its JSON.
func (l Label) Encode() string {
	if l.IsZero() {
		return ""
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// ParseLabel reads what Encode wrote.
func ParseLabel(s string) (Label, error) {
	var l Label
	if s == "" {
		return l, nil
	}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return l, Invalid("label", "%q is not a label: %v", s, err)
	}
	return l, nil
}

func intersect(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
