package orgdir_test

import (
	"context"
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
	labelled := labelled(t, st)
	// An archived stream stays archived: its members and history refer to it.
	if _, err := st.CreateStream(t.Context(), "w-owner", domain.Stream{ID: "s-old", Name: "old", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	archived, err := st.ArchiveStream(t.Context(), "", "s-old")
	if err != nil {
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
	if rep.Counts["workers"] != 1 || rep.Counts["grants"] != 3 || rep.Counts["settings"] != 1 || rep.Counts["insights"] != 5 {
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
	for _, name := range []string{"roles/r-owner.md", "workers/w-owner.md", "positions.yaml", "grants.yaml", "streams.yaml", "subscriptions.yaml", "config.yaml", "insights.yaml", "README.txt",
		"skills/lookup/skill.yaml", "skills/lookup/v1/version.yaml"} {
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
	labelled.check(t, st2)
	if got, err := st2.GetStream(t.Context(), "s-old"); err != nil || got.ArchivedAt == nil || !got.ArchivedAt.Equal(*archived.ArchivedAt) {
		t.Errorf("imported s-old = %+v, %v; want it archived at %v", got, err, archived.ArchivedAt)
	}
	if _, err := orgdir.Import(t.Context(), st2, first, orgdir.ImportOptions{Settings: registry, Tools: []string{"publish", "read_events"}}); err == nil || !strings.Contains(err.Error(), "already holds an org") {
		t.Errorf("a second import into the same store: %v", err)
	}
}

// labelledOrg is what labels an export must carry: a private stream, a
// quarantined insight, one only some may recall, an endorsed one, and a
// skill whose code an untrusted run wrote.
type labelledOrg struct {
	quarantined, secret, endorsed domain.Insight
}

func labelled(t *testing.T, st *store.Store) labelledOrg {
	t.Helper()
	ctx := t.Context()
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-board", Name: "board", Private: true, Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	untrusted := store.Writing(ctx, domain.Untrusted(`webhook event e-1 on s-hook from "mallory"`))
	put := func(ctx context.Context, trigger string) domain.Insight {
		in, err := st.StoreInsight(ctx, "w-owner", domain.Insight{Trigger: trigger, Resolution: "r", Type: domain.InsightFact, Scope: domain.ScopeOrg}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	var o labelledOrg
	o.quarantined = put(untrusted, "quarantined advice")
	o.secret = put(store.Writing(ctx, domain.ReadBy([]string{"w-owner", "w-pat"}, "event e-2 on s-dm", "w-pat")), "secret advice")
	o.endorsed = put(untrusted, "endorsed advice")
	var err error
	if o.endorsed, err = st.EndorseInsight(ctx, "w-owner", o.endorsed.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSkillVersion(untrusted, domain.SkillVersion{Name: "lookup", Version: 1, Status: domain.VersionOK, Description: "d",
		InputSchema: []byte(`{"type":"object"}`), Files: map[string]string{"Dockerfile": "FROM scratch"}, CreatedBy: "w-owner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveSkill(untrusted, "w-owner", domain.Skill{Name: "lookup", Description: "d", InputSchema: []byte(`{"type":"object"}`),
		Version: 1, Status: domain.SkillReady, CreatedBy: "w-owner"}); err != nil {
		t.Fatal(err)
	}
	return o
}

// check: the imported store holds the same labels.
func (o labelledOrg) check(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	for _, want := range []domain.Insight{o.quarantined, o.secret, o.endorsed} {
		got, err := st.GetInsight(ctx, want.ID)
		if err != nil || !got.Label.Equal(want.Label) || got.Label.Origin != want.Label.Origin || got.EndorsedBy != want.EndorsedBy ||
			(got.Label.Readers == nil) != (want.Label.Readers == nil) {
			t.Errorf("imported insight = %+v, %v; want the label of %+v", got, err, want)
		}
	}
	if !o.quarantined.Quarantined() || o.endorsed.Quarantined() || o.endorsed.EndorsedBy != "w-owner" || !o.secret.Label.Scoped() {
		t.Errorf("the labels exported were not those meant: %+v %+v %+v", o.quarantined, o.endorsed, o.secret)
	}
	if s, err := st.GetStream(ctx, "s-board"); err != nil || !s.Private {
		t.Errorf("imported s-board = %+v, %v; want private", s, err)
	}
	sk, err := st.GetSkill(ctx, "lookup")
	if err != nil || !sk.Label.Untrusted || !strings.Contains(sk.Label.Origin, "mallory") {
		t.Errorf("imported skill = %+v, %v; want the untrusted label of its code", sk, err)
	}
}
