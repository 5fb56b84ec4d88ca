package main

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

func TestInsightsHealth(t *testing.T) {
	db := bootstrapped(t)
	st := openStore(t, db)
	for _, in := range []domain.Insight{
		{Trigger: "deploy", Resolution: "drain first", Type: domain.InsightPattern, Scope: domain.ScopeOrg},
		{Trigger: "billing", Resolution: "ask finance", Type: domain.InsightFact, Scope: domain.ScopeOrg},
	} {
		got, err := st.StoreInsight(t.Context(), store.OwnerWorker, in, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.InsightFeedback(t.Context(), store.OwnerWorker, "", []string{got.ID}, domain.OutcomeFailed, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "table", args: []string{"--db", db}, want: []string{"CURRENT            2", "type pattern     1", "current 2, superseded 0, retired 0",
			"stale 0, contested 0, quarantined 0, sunk 2", "VOTES              2 from 1 people"}},
		{name: "-o json", args: []string{"--db", db, "-o", "json"}, want: []string{`"current": 2`, `"pattern": 1`, `"votes": 2`, `"voters": 1`}},
		{name: "no database", args: []string{"--db", tempDB(t)}, wantErr: "no database at "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, "", append([]string{"insights", "health"}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantAll(t, "output", out, tt.want...)
		})
	}
}
