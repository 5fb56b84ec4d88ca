package orgdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/orgdir"
	"github.com/helixml/helix-org/store/storetest"
)

var registry = domain.Settings{{Key: "a.limit", Type: domain.SettingInt, Default: "1"}, {Key: "a.key", Type: domain.SettingString, Secret: true}}

// TestRoundTrip: a bootstrapped org exports, imports into a new store and
// exports to the same bytes; a file edited by hand is read back as edited.
func TestRoundTrip(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), []string{"publish", "read_events"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(t.Context(), registry[0], "7"); err != nil {
		t.Fatal(err)
	}
	old, err := st.StoreInsight(t.Context(), "w-owner", domain.Insight{Trigger: "deploy friday", Resolution: "wait", Type: domain.InsightPreference, Scope: domain.ScopeOrg, Tags: []string{"ops"}}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CorrectInsight(t.Context(), "w-owner", old.ID, store.InsightPatch{Resolution: "wait until monday", Reason: "clearer"}); err != nil {
		t.Fatal(err)
	}
	first := t.TempDir()
	rep, err := orgdir.Export(t.Context(), st, first, registry)
	if err != nil || len(rep.Secrets) != 0 {
		t.Fatalf("export: %+v, %v", rep, err)
	}
	readme, _ := os.ReadFile(filepath.Join(first, "README.txt"))
	if !strings.HasSuffix(string(readme), "\nThis org had none set.\n") {
		t.Errorf("README.txt of an org without secrets:\n%s", readme)
	}
	// An operator's edit to a role is what gets imported.
	role := filepath.Join(first, "roles", "r-owner.md")
	data, _ := os.ReadFile(role)
	os.WriteFile(role, []byte(strings.Replace(string(data), "# Owner", "# The Owner", 1)), 0o600)

	st2 := storetest.New(t)
	rep, err = orgdir.Import(t.Context(), st2, first, orgdir.ImportOptions{Settings: registry, Tools: []string{"publish", "read_events"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts["workers"] != 1 || rep.Counts["grants"] != 2 || rep.Counts["settings"] != 1 || rep.Counts["insights"] != 2 {
		t.Errorf("counts = %v", rep.Counts)
	}
	r, err := st2.GetRole(t.Context(), "r-owner")
	if err != nil || !strings.HasPrefix(r.Content, "# The Owner\n") {
		t.Errorf("imported role = %q, %v", r.Content, err)
	}
	second := t.TempDir()
	if _, err := orgdir.Export(t.Context(), st2, second, registry); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"roles/r-owner.md", "workers/w-owner.md", "positions.yaml", "grants.yaml", "streams.yaml", "subscriptions.yaml", "config.yaml", "insights.yaml", "README.txt"} {
		a, _ := os.ReadFile(filepath.Join(first, name))
		b, _ := os.ReadFile(filepath.Join(second, name))
		if string(a) != string(b) {
			t.Errorf("%s differs after the round trip:\n%s\n---\n%s", name, a, b)
		}
	}
	// The imported memory recalls the current version only.
	res, err := st2.Recall(t.Context(), "w-owner", store.RecallQuery{Query: "deploy friday"})
	if err != nil || len(res) != 1 || res[0].Insight.Supersedes != old.ID || res[0].Insight.Resolution != "wait until monday" {
		t.Errorf("recall after import = %+v, %v", res, err)
	}
	if _, err := orgdir.Import(t.Context(), st2, first, orgdir.ImportOptions{Settings: registry, Tools: []string{"publish", "read_events"}}); err == nil || !strings.Contains(err.Error(), "already holds an org") {
		t.Errorf("a second import into the same store: %v", err)
	}
}
