package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
)

// chart is the tree the tests below run over:
//
//	p-owner
//	├── p-lead ── p-desk ── p-sub
//	└── p-support            (reports to no one: under the root)
var chart = domain.NewChart([]domain.Position{
	{ID: "p-owner"},
	{ID: "p-lead", ReportsTo: "p-owner"},
	{ID: "p-desk", ReportsTo: "p-lead"},
	{ID: "p-sub", ReportsTo: "p-desk"},
	{ID: "p-support"},
})

func TestChartManagers(t *testing.T) {
	tests := []struct {
		chart   domain.Chart
		pos     string
		want    []string
		wantErr string
	}{
		{chart, "p-sub", []string{"p-desk", "p-lead", "p-owner"}, ""},
		{chart, "p-support", []string{"p-owner"}, ""},
		{chart, "p-owner", nil, ""},
		{chart, "p-unknown", []string{"p-owner"}, ""},
		// The root reports to no one whatever the data says.
		{domain.Chart{"p-owner": "p-lead", "p-lead": ""}, "p-lead", []string{"p-owner"}, ""},
		{domain.Chart{"p-a": "p-b", "p-b": "p-c", "p-c": "p-a"}, "p-a", nil, "cycle: p-a → p-b → p-c → p-a"},
		{domain.Chart{"p-x": "p-a", "p-a": "p-b", "p-b": "p-a"}, "p-x", nil, "cycle: p-a → p-b → p-a"},
		{domain.Chart{"p-a": "p-a"}, "p-a", nil, "cycle: p-a → p-a"},
	}
	for _, tt := range tests {
		got, err := tt.chart.Managers(tt.pos)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrConflict) {
				t.Errorf("Managers(%s) error = %v, want a conflict naming %q", tt.pos, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Managers(%s) = %v, %v; want %v", tt.pos, got, err, tt.want)
		}
	}
}

func TestChartBelow(t *testing.T) {
	tests := []struct {
		pos, mgr string
		want     bool
	}{
		{"p-desk", "p-lead", true},
		{"p-sub", "p-lead", true},
		{"p-sub", "p-owner", true},
		{"p-support", "p-owner", true},
		{"p-lead", "p-desk", false},
		{"p-lead", "p-lead", false},
		{"p-support", "p-lead", false},
		{"p-owner", "p-owner", false},
		{"p-owner", "p-lead", false},
	}
	for _, tt := range tests {
		if got, err := chart.Below(tt.pos, tt.mgr); err != nil || got != tt.want {
			t.Errorf("Below(%s, %s) = %v, %v; want %v", tt.pos, tt.mgr, got, err, tt.want)
		}
	}
}

func TestChartCheckReportsTo(t *testing.T) {
	tests := []struct {
		pos, reportsTo string
		wantErr        string
	}{
		{"p-new", "p-desk", ""},
		{"p-new", "", ""},
		{"p-lead", "p-support", ""},
		{"p-lead", "p-lead", "reportsTo: a position cannot report to itself"},
		{"p-lead", "p-sub", "reportsTo: p-lead reporting to p-sub would close a cycle: p-lead → p-sub → p-desk → p-lead"},
		{"p-desk", "p-sub", "reportsTo: p-desk reporting to p-sub would close a cycle: p-desk → p-sub → p-desk"},
		{"p-owner", "p-lead", "reportsTo: p-owner is the root of the chart; it reports to no one"},
	}
	for _, tt := range tests {
		err := chart.CheckReportsTo(tt.pos, tt.reportsTo)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("CheckReportsTo(%s, %s) = %v", tt.pos, tt.reportsTo, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantErr || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("CheckReportsTo(%s, %s) = %v, want %q", tt.pos, tt.reportsTo, err, tt.wantErr)
		}
	}
}

var (
	owner   = domain.Seat{Worker: "w-owner", Position: "p-owner"}
	lead    = domain.Seat{Worker: "w-lead", Position: "p-lead"}
	desk    = domain.Seat{Worker: "w-desk", Position: "p-desk"}
	sub     = domain.Seat{Worker: "w-sub", Position: "p-sub"}
	desk2   = domain.Seat{Worker: "w-desk2", Position: "p-desk"}
	support = domain.Seat{Worker: "w-support", Position: "p-support"}
)

func TestChartCheckManages(t *testing.T) {
	tests := []struct {
		name          string
		actor, target domain.Seat
		wantErr       string
	}{
		{"manager → report", lead, desk, ""},
		{"manager → report's report", lead, sub, ""},
		{"owner → anyone", owner, sub, ""},
		{"owner → itself", owner, owner, ""},
		{"report → manager", desk, lead, "w-desk may only manage workers below p-desk; w-lead (p-lead) is not"},
		{"peer → peer in one position", desk, desk2, "w-desk may only manage workers below p-desk; w-desk2 (p-desk) is not"},
		{"across branches", lead, support, "w-lead may only manage workers below p-lead; w-support (p-support) is not"},
		{"anyone → owner", lead, owner, "w-lead may only manage workers below p-lead; w-owner is not"},
		// A worker hired into p-owner some other way is still not the owner.
		{"another seat at the root → owner", domain.Seat{Worker: "w-co", Position: "p-owner"}, owner, "w-co may only manage workers below p-owner; w-owner is not"},
	}
	for _, tt := range tests {
		err := chart.CheckManages(tt.actor, tt.target)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantErr || !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("%s: %v, want forbidden %q", tt.name, err, tt.wantErr)
		}
	}
	cyclic := domain.Chart{"p-a": "p-b", "p-b": "p-a"}
	if err := cyclic.CheckManages(domain.Seat{Worker: "w-a", Position: "p-a"}, domain.Seat{Worker: "w-b", Position: "p-b"}); err == nil {
		t.Error("a cyclic chart allowed an act; want it refused")
	}
}

func TestChartCheckPlaces(t *testing.T) {
	tests := []struct {
		actor   domain.Seat
		pos     string
		wantErr string
	}{
		{lead, "p-desk", ""},
		{lead, "p-sub", ""},
		{owner, "p-lead", ""},
		{lead, "p-lead", "w-lead may only hire into and create positions below p-lead; p-lead is not"},
		{lead, "p-support", "w-lead may only hire into and create positions below p-lead; p-support is not"},
		{lead, "p-owner", "w-lead may only hire into and create positions below p-lead; p-owner is not"},
		{owner, "p-owner", "p-owner is the owner's seat; only w-owner holds it"},
	}
	for _, tt := range tests {
		err := chart.CheckPlaces(tt.actor, tt.pos)
		if (err == nil) != (tt.wantErr == "") || err != nil && (err.Error() != tt.wantErr || !errors.Is(err, domain.ErrForbidden)) {
			t.Errorf("CheckPlaces(%s, %s) = %v, want %q", tt.actor, tt.pos, err, tt.wantErr)
		}
	}
}

func TestChartCheckEditsRole(t *testing.T) {
	tests := []struct {
		name    string
		actor   domain.Seat
		holders []string
		creator string
		wantErr string
	}{
		{"every holder below", lead, []string{"p-desk", "p-sub"}, "", ""},
		{"owner edits any role", owner, []string{"p-owner"}, "", ""},
		{"one holder is your own position", lead, []string{"p-desk", "p-lead"}, "", "w-lead may only edit roles whose every position is below p-lead; r-x is held by p-lead"},
		{"one holder elsewhere", lead, []string{"p-desk", "p-support"}, "", "r-x is held by p-support"},
		{"unheld, by its creator", desk, nil, "w-desk", ""},
		{"unheld, by the owner", owner, nil, "w-desk", ""},
		{"unheld, by another", lead, nil, "w-desk", "r-x is held by no position; only its creator or w-owner may edit it"},
		{"unheld, creator unknown", lead, nil, "", "only its creator or w-owner may edit it"},
	}
	for _, tt := range tests {
		err := chart.CheckEditsRole(tt.actor, "r-x", tt.holders, tt.creator)
		if (err == nil) != (tt.wantErr == "") || err != nil && (!strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, domain.ErrForbidden)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestReadRules(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"owner reads any log", chart.CheckReadsLog(owner, sub), ""},
		{"a worker reads its own log", chart.CheckReadsLog(desk, desk), ""},
		{"a manager reads a report's log", chart.CheckReadsLog(lead, sub), ""},
		{"a report does not read its manager's", chart.CheckReadsLog(desk, lead), "w-desk may only read the activation logs of workers below p-desk (and its own); w-lead (p-lead) is not"},
		{"a peer does not read a peer's", chart.CheckReadsLog(desk, desk2), "w-desk may only read the activation logs of workers below p-desk (and its own); w-desk2 (p-desk) is not"},
		{"owner reads s-org", domain.CheckReadsOrg("w-owner"), ""},
		{"no one else reads s-org", domain.CheckReadsOrg("w-lead"), "s-org is the org's audit trail; only w-owner reads it"},
		{"a DM member reads it", domain.CheckReadsDM("w-b", "s-dm-w-a-w-b", "w-a"), ""},
		{"a DM outsider does not", domain.CheckReadsDM("w-owner", "s-dm-w-a-w-b", "w-a"), "s-dm-w-a-w-b is a direct-message stream; only its two members read it"},
	}
	for _, tt := range tests {
		if (tt.err == nil) != (tt.want == "") || tt.err != nil && (tt.err.Error() != tt.want || !errors.Is(tt.err, domain.ErrForbidden)) {
			t.Errorf("%s: %v, want %q", tt.name, tt.err, tt.want)
		}
	}
}

func TestDMPair(t *testing.T) {
	tests := []struct {
		stream, createdBy string
		a, b              string
		ok                bool
	}{
		{"s-dm-w-a-w-b", "w-a", "w-a", "w-b", true},
		{"s-dm-w-a-w-b", "w-b", "w-b", "w-a", true},
		// Hyphens in ids make the id alone ambiguous; the creator settles it.
		{"s-dm-w-x-w-y-w-z", "w-x", "w-x", "w-y-w-z", true},
		{"s-dm-w-x-w-y-w-z", "w-x-w-y", "w-x-w-y", "w-z", true},
		{"s-dm-w-x-w-y-w-z", "w-z", "w-z", "w-x-w-y", true},
		{"s-dm-w-a-w-b", "w-c", "", "", false},
		{"s-dm-w-a-w-b", "", "", "", false},
		{"s-inbox", "w-a", "", "", false},
		{"s-dm-w-b-w-a", "w-a", "", "", false}, // not in sorted order: not a DM id
	}
	for _, tt := range tests {
		a, b, ok := domain.DMPair(tt.stream, tt.createdBy)
		if a != tt.a || b != tt.b || ok != tt.ok {
			t.Errorf("DMPair(%s, %s) = %s, %s, %v; want %s, %s, %v", tt.stream, tt.createdBy, a, b, ok, tt.a, tt.b, tt.ok)
		}
		if ok && domain.DMStreamID(a, b) != tt.stream {
			t.Errorf("DMStreamID(%s, %s) = %s, want %s", a, b, domain.DMStreamID(a, b), tt.stream)
		}
	}
}
