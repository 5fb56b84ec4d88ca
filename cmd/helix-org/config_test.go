package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/tools"
)

const secret = "sk-test-0123456789abcdef"

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup [][]string // commands that must succeed first; --db is added
		args  []string   // --db is added
		noDB  bool       // no database is created first
		// errIs is the whole error message, {db} standing for the
		// database's path.
		errIs string
		stdin string
		// wantOut is the exact stdout, unless empty; contains and lacks
		// are checked against stdout and stderr together.
		wantOut  string
		contains []string
		lacks    []string
		wantErr  []string
	}{
		{
			name:    "get an unset key prints the default and says so",
			setup:   [][]string{{"bootstrap"}},
			args:    []string{"config", "get", "dispatch.max_concurrent"},
			wantOut: "4\n", contains: []string{"dispatch.max_concurrent is not set; showing its default"},
		},
		{
			name:    "set then get",
			setup:   [][]string{{"config", "set", "dispatch.max_concurrent", "8"}},
			args:    []string{"config", "get", "dispatch.max_concurrent"},
			wantOut: "8\n", lacks: []string{"default"},
		},
		{
			name:    "set echoes the value",
			args:    []string{"config", "set", "dispatch.timeout", "90s"},
			wantOut: "dispatch.timeout = 90s\n",
		},
		{
			name:    "set never echoes a secret",
			args:    []string{"config", "set", "agent.api_key", secret},
			wantOut: "agent.api_key = " + domain.Redacted + "\n",
		},
		{
			name:    "set reads the value from stdin",
			args:    []string{"config", "set", "agent.api_key", "-"},
			stdin:   secret + "\n",
			wantOut: "agent.api_key = " + domain.Redacted + "\n",
		},
		{
			name:    "a value read from stdin loses only its trailing newline",
			setup:   [][]string{{"config", "set", "agent.model", "-"}},
			args:    []string{"config", "get", "agent.model"},
			wantOut: "claude-sonnet-4\n",
		},
		{
			name:    "get redacts a secret",
			setup:   [][]string{{"config", "set", "agent.api_key", secret}},
			args:    []string{"config", "get", "agent.api_key"},
			wantOut: domain.Redacted + "\n", lacks: []string{secret},
		},
		{
			name:    "get --reveal-secrets shows a secret",
			setup:   [][]string{{"config", "set", "agent.api_key", secret}},
			args:    []string{"config", "get", "agent.api_key", "--reveal-secrets"},
			wantOut: secret + "\n",
		},
		{
			name:     "list redacts a secret",
			setup:    [][]string{{"config", "set", "agent.api_key", secret}},
			args:     []string{"config", "list"},
			contains: []string{domain.Redacted},
			lacks:    []string{secret},
		},
		{
			name:     "list --reveal-secrets shows a secret",
			setup:    [][]string{{"config", "set", "agent.api_key", secret}},
			args:     []string{"config", "list", "--reveal-secrets"},
			contains: []string{secret},
			lacks:    []string{domain.Redacted},
		},
		{
			name:     "list marks defaults and unset keys",
			setup:    [][]string{{"config", "set", "agent.max_turns", "12"}},
			args:     []string{"config", "list"},
			contains: []string{"4 (default)", "(not set)", " 12 "},
			lacks:    []string{"12 (default)", "30 (default)"},
		},
		{
			name:     "list shows the first line of a multi-line value",
			setup:    [][]string{{"config", "set", "agent.policy", "-"}},
			args:     []string{"config", "list"},
			contains: []string{"Be kind. … (2 lines)"},
			lacks:    []string{"Be brief."},
		},
		{
			name:     "get -o json",
			setup:    [][]string{{"config", "set", "dispatch.max_concurrent", "8"}},
			args:     []string{"config", "get", "dispatch.max_concurrent", "-o", "json"},
			contains: []string{`"key": "dispatch.max_concurrent"`, `"value": "8"`, `"set": true`, `"default": "4"`},
		},
		{
			name:     "list -o json redacts a secret",
			setup:    [][]string{{"config", "set", "agent.api_key", secret}},
			args:     []string{"config", "list", "-o", "json"},
			contains: []string{`"key": "agent.api_key",` + "\n" + `      "value": "` + domain.Redacted + `",` + "\n" + `      "set": true`, `"key": "dispatch.timeout"`},
			lacks:    []string{secret},
		},
		{
			name:    "delete restores the default",
			setup:   [][]string{{"config", "set", "agent.max_turns", "12"}, {"config", "delete", "agent.max_turns"}},
			args:    []string{"config", "get", "agent.max_turns"},
			wantOut: "30\n", contains: []string{"showing its default"},
		},
		{
			name:    "delete says what applies now",
			setup:   [][]string{{"config", "set", "agent.max_turns", "12"}},
			args:    []string{"config", "delete", "agent.max_turns"},
			wantOut: "deleted agent.max_turns; the default (30) applies again\n",
		},
		{
			name:    "delete of an unset key",
			setup:   [][]string{{"bootstrap"}},
			args:    []string{"config", "delete", "agent.max_turns"},
			wantErr: []string{"agent.max_turns", "is not set"},
		},
		{
			name:  "get against a missing database",
			noDB:  true,
			args:  []string{"config", "get", "dispatch.max_concurrent"},
			errIs: "no database at {db}: run where it is, point --db (or HELIX_ORG_DB) at it, or create one with `helix-org bootstrap --init`",
		},
		{
			name:  "set against a missing database creates none",
			noDB:  true,
			args:  []string{"config", "set", "dispatch.max_concurrent", "8"},
			errIs: "no database at {db}: run where it is, point --db (or HELIX_ORG_DB) at it, or pass --init to create a new one",
		},
		{
			name:    "set --init creates the database",
			noDB:    true,
			args:    []string{"config", "set", "dispatch.max_concurrent", "8", "--init"},
			wantOut: "dispatch.max_concurrent = 8\n",
		},
		{
			name:  "bad int",
			args:  []string{"config", "set", "dispatch.max_concurrent", "abc"},
			errIs: `dispatch.max_concurrent: "abc" is not an integer`,
		},
		{
			name:  "a cap on live views that refuses them all",
			args:  []string{"config", "set", "ui.live_views_max", "0"},
			errIs: "ui.live_views_max: value: must be at least 1 (0 would refuse every live view)",
		},
		{
			name:    "bad duration",
			args:    []string{"config", "set", "dispatch.timeout", "ten minutes"},
			wantErr: []string{"dispatch.timeout", "not a duration"},
		},
		{
			name:    "value outside the enum",
			args:    []string{"config", "set", "agent.provider", "gemini"},
			wantErr: []string{"agent.provider", "anthropic, openai"},
		},
		{
			name:  "a mistyped key on set suggests the nearest",
			args:  []string{"config", "set", "dispatch.max_concurent", "8"},
			errIs: `unknown config key "dispatch.max_concurent"; did you mean "dispatch.max_concurrent"?`,
		},
		{
			name:  "a mistyped section suggests the nearest",
			args:  []string{"config", "get", "agnet.model"},
			errIs: `unknown config key "agnet.model"; did you mean "agent.model"?`,
		},
		{
			name:  "unknown key on get",
			args:  []string{"config", "get", "nope"},
			errIs: `unknown config key "nope"`,
		},
		{
			name:    "unknown key on delete",
			args:    []string{"config", "delete", "nope"},
			wantErr: []string{`unknown config key "nope"`},
		},
		{
			name:    "bash in the host sandbox does not warn",
			args:    []string{"config", "set", "agent.bash", `{"roles":["r-dev"]}`},
			wantOut: `agent.bash = {"roles":["r-dev"]}` + "\n",
			lacks:   []string{"warning"},
		},
		{
			name:     "bash on an unsandboxed host runtime warns that it is a shell as the server's user",
			setup:    [][]string{{"config", "set", "agent.sandbox", "off"}},
			args:     []string{"config", "set", "agent.bash", `{"roles":["r-dev"]}`},
			wantOut:  `agent.bash = {"roles":["r-dev"]}` + "\n",
			contains: []string{"warning: agent.bash gives the built-in agent a shell on this host, running as the server's user", "agent.runtime docker"},
		},
		{
			name:     "turning the sandbox off warns, and of bash too",
			setup:    [][]string{{"config", "set", "agent.bash", `{"all":true}`}},
			args:     []string{"config", "set", "agent.sandbox", "off"},
			wantOut:  "agent.sandbox = off\n",
			contains: []string{"warning: with agent.sandbox off the host runtimes (claude, codex, gemini, opencode, command, builtin) run agents as the server's user", "warning: agent.bash gives"},
		},
		{
			name:    "an unknown sandbox",
			args:    []string{"config", "set", "agent.sandbox", "on"},
			wantErr: []string{`agent.sandbox: unknown value "on" (valid: bwrap, off)`},
		},
		{
			name:    "a relative shared path",
			args:    []string{"config", "set", "agent.sandbox.paths", `{"rw":["data"]}`},
			wantErr: []string{`agent.sandbox.paths: "data" is not an absolute path below /`},
		},
		{
			name:    "sharing the whole filesystem",
			args:    []string{"config", "set", "agent.sandbox.paths", `{"ro":["/"]}`},
			wantErr: []string{`agent.sandbox.paths: "/" is not an absolute path below /`},
		},
		{
			name:    "a shared path of an unknown kind",
			args:    []string{"config", "set", "agent.sandbox.paths", `{"rx":["/srv"]}`},
			wantErr: []string{`agent.sandbox.paths: want {"ro":["/path",…],"rw":["/path",…]}: json: unknown field "rx"`},
		},
		{
			name:  "bash in containers does not warn",
			setup: [][]string{{"config", "set", "agent.runtime", "docker"}},
			args:  []string{"config", "set", "agent.bash", `{"workers":["w-x"]}`},
			lacks: []string{"warning"},
		},
		{
			name:     "leaving containers with bash on and the sandbox off warns",
			setup:    [][]string{{"config", "set", "agent.runtime", "docker"}, {"config", "set", "agent.sandbox", "off"}, {"config", "set", "agent.bash", `{"all":true}`}},
			args:     []string{"config", "set", "agent.runtime", "builtin"},
			contains: []string{"warning: agent.bash gives the built-in agent a shell on this host"},
		},
		{
			name:  "bash for no one does not warn",
			args:  []string{"config", "set", "agent.bash", `{}`},
			lacks: []string{"warning"},
		},
		{
			name:    "bash is a scope, not a bool",
			args:    []string{"config", "set", "agent.bash", "true"},
			wantErr: []string{"agent.bash", "not a JSON object"},
		},
	}
	stdinFor := map[string]string{
		"agent.model":  "claude-sonnet-4\n",
		"agent.policy": "Be kind.\nBe brief.\n",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tempDB(t)
			if !tt.noDB {
				db = newDB(t)
			}
			for _, args := range tt.setup {
				var stdin string
				if len(args) > 2 {
					stdin = stdinFor[args[2]]
				}
				_, errOut, err := run(t, stdin, append(args, "--db", db)...)
				if err != nil {
					t.Fatalf("setup %v: %v\n%s", args, err, errOut)
				}
			}
			out, errOut, err := run(t, tt.stdin, append(tt.args, "--db", db)...)
			if tt.errIs != "" {
				if want := strings.ReplaceAll(tt.errIs, "{db}", db); err == nil || err.Error() != want {
					t.Fatalf("error = %v\nwant exactly %s", err, want)
				}
				return
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("want an error, got output:\n%s", out)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			if tt.wantOut != "" {
				if diff := cmp.Diff(tt.wantOut, out); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			both := out + errOut
			for _, want := range tt.contains {
				if !strings.Contains(both, want) {
					t.Errorf("output lacks %q:\n%s", want, both)
				}
			}
			for _, bad := range tt.lacks {
				if strings.Contains(both, bad) {
					t.Errorf("output contains %q:\n%s", bad, both)
				}
			}
		})
	}
}

// TestConfigListIsATable checks that list shows every registered key once,
// with its type in one aligned column.
func TestConfigListIsATable(t *testing.T) {
	db := newDB(t)
	mustRun(t, "config", "set", "agent.api_key", secret, "--db", db)
	mustRun(t, "config", "set", "dispatch.timeout", "90s", "--db", db)
	lines := strings.Split(strings.TrimSuffix(mustRun(t, "config", "list", "--db", db), "\n"), "\n")

	header := lines[0]
	typeCol := strings.Index(header, "TYPE")
	if !strings.HasPrefix(header, "KEY") || !strings.Contains(header, "VALUE") || typeCol < 0 || strings.Index(header, "DESCRIPTION") < typeCol {
		t.Fatalf("header = %q, want KEY VALUE TYPE DESCRIPTION", header)
	}
	descCol := utf8.RuneCountInString(header[:strings.Index(header, "DESCRIPTION")])
	var keys []string
	for _, line := range lines[1:] {
		key, _, _ := strings.Cut(line, " ")
		keys = append(keys, key)
		spec, err := settings().Lookup(key)
		if err != nil {
			t.Errorf("row %q: %v", line, err)
			continue
		}
		if row := []rune(line); len(row) < typeCol || !strings.HasPrefix(string(row[typeCol:]), string(spec.Type)+" ") {
			t.Errorf("row %q: type %q not in the TYPE column at %d", line, spec.Type, typeCol)
		}
		desc := strings.TrimSpace(string([]rune(line)[min(descCol, utf8.RuneCountInString(line)):]))
		if !strings.HasPrefix(spec.Description, strings.TrimSuffix(desc, "…")) {
			t.Errorf("row %q does not end with the description %q, whole or cut", line, spec.Description)
		}
	}
	var want []string
	for _, s := range settings() {
		want = append(want, s.Key)
	}
	if diff := cmp.Diff(want, keys, cmpSorted); diff != "" {
		t.Errorf("listed keys (-want +got):\n%s", diff)
	}
}

// TestConfigListFitsATerminal: config list's table fits 120 columns
// (once 782, padded by one long default), cutting long values and
// descriptions with …, while config get and -o json keep them whole.
func TestConfigListFitsATerminal(t *testing.T) {
	db := newDB(t)
	out, stderr, err := run(t, "", "config", "list", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines {
		if n := utf8.RuneCountInString(line); n > listWidth {
			t.Errorf("a row of %d columns, wider than %d:\n%s", n, listWidth, line)
		}
	}
	if want := "(… marks what was cut to fit: helix-org config get <key> or config list -o json shows it whole)\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	highRisk := tools.HighRiskSetting
	tests := []struct {
		key, value string
		desc       string // "…": the description cut to fit
	}{
		{"approvals.high_risk", string([]rune(highRisk.Default)[:listValueRunes-1]) + "… (default)", "…"},
		{"agent.max_tokens", "4096 (default)", "Most output tokens per model reply."},
		{"skill.call_timeout", "2m (default)", "Longest one POST /execute may take."},
	}
	header := lines[0]
	valueCol, typeCol, descCol := strings.Index(header, "VALUE"), strings.Index(header, "TYPE"), strings.Index(header, "DESCRIPTION")
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, tt.key+" ") })
			if i < 0 {
				t.Fatalf("no row for %s:\n%s", tt.key, out)
			}
			row := []rune(lines[i])
			if got := strings.TrimSpace(string(row[valueCol:typeCol])); got != tt.value {
				t.Errorf("VALUE = %q, want %q", got, tt.value)
			}
			got := strings.TrimSpace(string(row[descCol:]))
			if tt.desc == "…" {
				if !strings.HasSuffix(got, "…") || !strings.HasPrefix(highRisk.Description, strings.TrimSuffix(got, "…")) {
					t.Errorf("DESCRIPTION = %q, want the start of %q cut with …", got, highRisk.Description)
				}
			} else if got != tt.desc {
				t.Errorf("DESCRIPTION = %q, want %q", got, tt.desc)
			}
		})
	}

	whole := mustRun(t, "config", "list", "--db", db, "-o", "json")
	for _, want := range []string{highRisk.Default, highRisk.Description} {
		if !strings.Contains(whole, want) {
			t.Errorf("config list -o json lacks %q", want)
		}
	}
	if got := mustRun(t, "config", "get", highRisk.Key, "--db", db); got != highRisk.Default+"\n" {
		t.Errorf("config get %s = %q, want the whole default", highRisk.Key, got)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	slices.Sort(out)
	return out
})

// TestConfigSetRejectsWithoutStoring pins that a rejected value leaves the
// stored value alone, and that a typo never creates a database file.
func TestConfigSetRejectsWithoutStoring(t *testing.T) {
	t.Run("existing value kept", func(t *testing.T) {
		db := newDB(t)
		mustRun(t, "config", "set", "dispatch.max_concurrent", "8", "--db", db)
		if _, _, err := run(t, "", "config", "set", "dispatch.max_concurrent", "abc", "--db", db); err == nil {
			t.Fatal("set to abc succeeded")
		}
		v, ok, err := openStore(t, db).Setting(t.Context(), "dispatch.max_concurrent")
		if err != nil || !ok || v != "8" {
			t.Errorf("after a rejected set: value %q, set %v, err %v; want 8 still stored", v, ok, err)
		}
	})
	t.Run("nothing stored", func(t *testing.T) {
		db := tempDB(t)
		for _, args := range [][]string{
			{"config", "set", "dispatch.max_concurrent", "abc"},
			{"config", "set", "no.such.key", "1"},
		} {
			if _, _, err := run(t, "", append(args, "--db", db)...); err == nil {
				t.Errorf("%v succeeded", args)
			}
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("a rejected set created the database file (stat err %v)", err)
		}
	})
}

// TestConfigKeyFile pins that secrets are sealed with the --key-file given,
// and cannot be read back with another key.
func TestConfigKeyFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "helix-org.db")
	keyFile := filepath.Join(dir, "other.key")
	mustRun(t, "config", "set", "agent.api_key", secret, "--init", "--db", db, "--key-file", keyFile)

	if got := mustRun(t, "config", "get", "agent.api_key", "--reveal-secrets", "--db", db, "--key-file", keyFile); got != secret+"\n" {
		t.Errorf("get with the same key file = %q, want the secret", got)
	}
	fi, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("key file not created: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
	if _, _, err := run(t, "", "config", "get", "agent.api_key", "--reveal-secrets", "--db", db); err == nil {
		t.Error("get with the default key file decrypted a secret sealed with another key")
	}
}

// TestConfigSetReachesOpenStore is the running-server property: a store
// that is already open sees a value the CLI sets, without reopening.
func TestConfigSetReachesOpenStore(t *testing.T) {
	db := tempDB(t)
	st := openStore(t, db)
	if got, want := st.IntSetting(t.Context(), tools.MaxBodySetting), int64(domain.DefaultMaxBody); got != want {
		t.Fatalf("before set: %d, want the default %d", got, want)
	}

	mustRun(t, "config", "set", tools.MaxBodySetting.Key, "10", "--db", db)
	if got := st.IntSetting(t.Context(), tools.MaxBodySetting); got != 10 {
		t.Errorf("after config set: open store reads %d, want 10", got)
	}

	if _, errOut, err := run(t, secret, "config", "set", agent.APIKeySetting.Key, "-", "--db", db); err != nil {
		t.Fatalf("set secret: %v\n%s", err, errOut)
	}
	if v, ok, err := st.Setting(t.Context(), agent.APIKeySetting.Key); err != nil || !ok || v != secret {
		t.Errorf("open store reads the secret as %q (set %v, err %v); want it decrypted with the shared key file", v, ok, err)
	}

	mustRun(t, "config", "delete", tools.MaxBodySetting.Key, "--db", db)
	if got, want := st.IntSetting(t.Context(), tools.MaxBodySetting), int64(domain.DefaultMaxBody); got != want {
		t.Errorf("after config delete: open store reads %d, want the default %d", got, want)
	}
}
