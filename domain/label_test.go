package domain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// TestLabelJoin: untrusted wins and keeps the first origin; readers
// intersect; the org (nil) is above any set; bottom is the zero value.
func TestLabelJoin(t *testing.T) {
	ab := domain.ReadBy([]string{"w-b", "w-a"}, "event e-1 on s-dm-w-a-w-b", "w-a")
	ac := domain.ReadBy([]string{"w-a", "w-c"}, "event e-2 on s-p", "w-c")
	tests := []struct {
		name string
		a, b domain.Label
		want domain.Label
	}{
		{"bottom", domain.Label{}, domain.Label{}, domain.Label{}},
		{"untrusted wins", domain.Label{}, domain.Untrusted("x"), domain.Untrusted("x")},
		{"the first origin stays", domain.Untrusted("x"), domain.Untrusted("y"), domain.Untrusted("x")},
		{"a set narrows the org", domain.Label{}, ab, domain.Label{Readers: []string{"w-a", "w-b"}, Narrowed: "event e-1 on s-dm-w-a-w-b", By: []string{"w-a"}}},
		{"the org keeps a set", ab, domain.Label{}, ab},
		{"sets intersect", ab, ac, domain.Label{Readers: []string{"w-a"}, Narrowed: "event e-1 on s-dm-w-a-w-b", By: []string{"w-a", "w-c"}}},
		{"disjoint sets are nobody", domain.ReadBy([]string{"w-x"}, "i", "w-x"), domain.ReadBy([]string{"w-y"}, "j", "w-y"),
			domain.Label{Readers: []string{}, Narrowed: "i", By: []string{"w-x", "w-y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Join(tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Join (-want +got):\n%s", diff)
			}
			back, err := domain.ParseLabel(got.Encode())
			if err != nil || !back.Equal(got) || back.Origin != got.Origin || (back.Readers == nil) != (got.Readers == nil) {
				t.Errorf("Encode %q read back as %+v, %v", got.Encode(), back, err)
			}
		})
	}
	if (domain.Label{}).Encode() != "" {
		t.Error("bottom does not encode as the empty column")
	}
}

// TestLabelPolicies: who a labelled item may reach, and whose own words
// it is.
func TestLabelPolicies(t *testing.T) {
	dm := domain.ReadBy([]string{"w-ai", "w-pat"}, "event e-1 on s-dm", "w-pat")
	tests := []struct {
		name     string
		l        domain.Label
		audience []string
		within   bool
		ownWords string
	}{
		{"org data anywhere", domain.Label{}, nil, true, ""},
		{"a DM back into the DM", dm, []string{"w-pat", "w-ai"}, true, "w-pat"},
		{"a DM to the org", dm, nil, false, "w-pat"},
		{"a DM to someone else", dm, []string{"w-ai", "w-eve"}, false, "w-pat"},
		{"untrusted words are no one's own", dm.Join(domain.Untrusted("x")), nil, false, ""},
		{"words of two people", dm.Join(domain.ReadBy([]string{"w-ai", "w-pat"}, "e-2", "w-ai")), nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.Within(tt.audience); got != tt.within {
				t.Errorf("Within(%v) = %v, want %v", tt.audience, got, tt.within)
			}
			for _, p := range []string{"w-pat", "w-ai"} {
				if got := tt.l.OwnWords(p); got != (p == tt.ownWords) {
					t.Errorf("OwnWords(%s) = %v", p, got)
				}
			}
		})
	}
	if got := dm.Join(domain.Untrusted("x")).Declassified(); got.Scoped() || !got.Untrusted {
		t.Errorf("Declassified = %+v, want org readers, still untrusted", got)
	}
	if _, err := domain.ParseLabel("{"); err == nil {
		t.Error("a broken label parsed")
	}
}
