package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/helixml/helix-org/store"
)

// TestTokenListAndRevoke: list shows ids, never secrets; revoke by id and
// by worker ends exactly those tokens; the refusals say what to do.
func TestTokenListAndRevoke(t *testing.T) {
	db := tempDB(t)
	first := printedToken(t, mustRun(t, "bootstrap", "--init", "--db", db))
	second := printedToken(t, mustRun(t, "token", "create", "w-owner", "--ttl", "2h", "--db", db))

	out := mustRun(t, "token", "list", "--db", db)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "ID        WORKER   KIND      LABEL         CREATED            EXPIRES            LAST USED" {
		t.Errorf("header = %q", lines[0])
	}
	if len(lines) != 3 || !strings.Contains(lines[1], " bootstrap ") || !strings.Contains(lines[1], " never ") ||
		!strings.Contains(lines[2], " token create ") {
		t.Errorf("token list:\n%s", out)
	}
	for _, secret := range []string{first, second} {
		if strings.Contains(out, secret) || strings.Contains(out, strings.TrimPrefix(secret, store.TokenPrefix)[:8]) {
			t.Errorf("token list shows part of a secret:\n%s", out)
		}
	}

	var listed struct{ Tokens []store.Token }
	if err := json.Unmarshal([]byte(mustRun(t, "token", "list", "-o", "json", "--db", db)), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Tokens) != 2 || listed.Tokens[1].ExpiresAt == nil {
		t.Fatalf("token list -o json = %+v", listed.Tokens)
	}
	id := listed.Tokens[0].ID

	if got := mustRun(t, "token", "revoke", id, "--db", db); got != "revoked "+id+" (w-owner, operator, bootstrap)\n" {
		t.Errorf("revoke output = %q", got)
	}
	st := openStore(t, db)
	if _, err := st.VerifyToken(t.Context(), first); err == nil {
		t.Error("the revoked token still verifies")
	}
	if _, err := st.VerifyToken(t.Context(), second); err != nil {
		t.Errorf("revoking one token ended another: %v", err)
	}

	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"token", "revoke", id}, `revoke tokens: no live token with id "` + id + `" (see helix-org token list): not found`},
		{[]string{"token", "revoke"}, "name a token id (see helix-org token list) or --worker <worker>, not both"},
		{[]string{"token", "revoke", id, "--worker", "w-owner"}, "name a token id (see helix-org token list) or --worker <worker>, not both"},
	}
	for _, r := range refusals {
		if _, _, err := run(t, "", append(r.args, "--db", db)...); err == nil || err.Error() != r.want {
			t.Errorf("%v: error = %v\nwant %s", r.args, err, r.want)
		}
	}

	if got := mustRun(t, "token", "revoke", "--worker", "w-owner", "--db", db); !strings.HasPrefix(got, "revoked ") || strings.Count(got, "\n") != 1 {
		t.Errorf("revoke --worker = %q, want the one live token", got)
	}
	if got := mustRun(t, "token", "list", "--db", db); got != "No live tokens. Mint one with: helix-org token create <worker>\n" {
		t.Errorf("token list after revoking all = %q", got)
	}
	if got := mustRun(t, "token", "list", "--all", "--db", db); strings.Count(got, "revoked ") != 2 {
		t.Errorf("token list --all:\n%s", got)
	}
}

// TestCompletion: names come from the database when it exists; with none
// there, nothing is offered and no database is created.
func TestCompletion(t *testing.T) {
	db := tempDB(t)
	mustRun(t, "bootstrap", "--init", "--db", db)
	st := openStore(t, db)
	if _, err := st.CreateToken(t.Context(), store.TokenSpec{WorkerID: "w-owner", Kind: store.TokenOperator}); err != nil {
		t.Fatal(err)
	}
	toks, _ := st.ListTokens(t.Context(), store.TokenQuery{})
	complete := func(args ...string) []string {
		t.Helper()
		out := mustRun(t, append([]string{"__complete"}, args...)...)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		return got
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"workers for token create", []string{"token", "create", "--db", db, ""}, []string{"w-owner"}},
		{"workers for --worker", []string{"call", "list_roles", "--db", db, "--worker", "w-"}, []string{"w-owner"}},
		{"streams in call arguments", []string{"call", "publish", "--db", db, "stream=s-o"}, []string{"stream=s-org"}},
		{"roles in call arguments", []string{"call", "get_role", "--db", db, "id=r-"}, []string{"id=r-owner"}},
		{"tools for call", []string{"call", "--db", db, "list_ro"}, []string{"list_roles"}},
		{"config keys", []string{"config", "get", "dispatch.max_c"}, []string{"dispatch.max_concurrent"}},
		{"config values", []string{"config", "set", "agent.provider", ""}, []string{"anthropic", "openai"}},
		{"token ids", []string{"token", "revoke", "--db", db, toks[0].ID[:4]}, []string{toks[0].ID}},
		{"output formats", []string{"call", "x", "-o", ""}, []string{"json", "yaml", "table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := complete(tt.args...)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("completions = %q, want %q", got, tt.want)
			}
		})
	}
	missing := tempDB(t)
	if got := complete("token", "create", "--db", missing, ""); len(got) != 0 {
		t.Errorf("completions without a database = %q", got)
	}
	if _, _, err := run(t, "", "completion", "bash"); err != nil {
		t.Errorf("completion bash: %v", err)
	}
	if got := mustRun(t, "__complete", "token", "create", "--db", missing, ""); strings.Contains(got, "w-") {
		t.Errorf("completion offered names from nowhere: %q", got)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("completion created %s", missing)
	}
}
