package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// run executes the CLI as main does, feeding stdin, and returns what it
// printed on stdout and stderr.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// mustRun runs a command that must succeed and returns its stdout.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("helix-org %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// tempDB is a database path in a fresh temp dir; the CLI creates the file.
func tempDB(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "helix-org.db")
}

// openStore opens the database the CLI wrote, as a running server would.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), db, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var tokenLine = regexp.MustCompile(`(?m)^Token:\s+(\S+)$`)

// printedToken pulls the bearer token out of printConnect's output.
func printedToken(t *testing.T, out string) string {
	t.Helper()
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Token: line in output:\n%s", out)
	}
	return m[1]
}

func TestBootstrapIsIdempotent(t *testing.T) {
	db := tempDB(t)
	first := printedToken(t, mustRun(t, "bootstrap", "--db", db))
	second := printedToken(t, mustRun(t, "bootstrap", "--db", db, "--url", "http://org.example:9000"))
	if first == second {
		t.Errorf("both runs printed the same token %q; each run should mint a fresh one", first)
	}

	st := openStore(t, db)
	for _, tok := range []string{first, second} {
		info, err := st.VerifyToken(t.Context(), tok)
		if err != nil {
			t.Errorf("VerifyToken(%q): %v", tok, err)
			continue
		}
		if info.WorkerID != store.OwnerWorker {
			t.Errorf("token %q belongs to %q, want %q", tok, info.WorkerID, store.OwnerWorker)
		}
	}
	workers, err := st.ListWorkers(t.Context(), store.WorkerFilter{IncludeDismissed: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range workers {
		ids = append(ids, w.ID)
	}
	if diff := cmp.Diff([]string{store.OwnerWorker}, ids); diff != "" {
		t.Errorf("workers after two bootstraps (-want +got):\n%s", diff)
	}
	grants, err := st.ListGrants(t.Context(), store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != len(tools.Names()) {
		t.Errorf("owner holds %d grants after two bootstraps, want one per tool (%d)", len(grants), len(tools.Names()))
	}
}

func TestBootstrapPrintsConnectDetails(t *testing.T) {
	out := mustRun(t, "bootstrap", "--db", tempDB(t), "--url", "http://org.example:9000")
	for _, want := range []string{
		"Worker:    w-owner",
		"MCP URL:   http://org.example:9000/workers/w-owner/mcp",
		"claude mcp add --transport http helix-org http://org.example:9000/workers/w-owner/mcp",
		`"Authorization": "Bearer ` + store.TokenPrefix,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bootstrap output lacks %q:\n%s", want, out)
		}
	}
}

func TestTokenCreate(t *testing.T) {
	tests := []struct {
		name      string
		bootstrap bool
		args      []string
		wantErr   []string
	}{
		{name: "owner", bootstrap: true, args: []string{"w-owner"}},
		{name: "owner with ttl", bootstrap: true, args: []string{"w-owner", "--ttl", "1h"}},
		{name: "unknown worker", bootstrap: true, args: []string{"w-nobody"}, wantErr: []string{`worker "w-nobody"`, "not found"}},
		{name: "no database at --db", args: []string{"w-owner"}, wantErr: []string{"does not exist", "helix-org bootstrap"}},
		{name: "no worker given", args: nil, wantErr: []string{"accepts 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tempDB(t)
			if tt.bootstrap {
				mustRun(t, "bootstrap", "--db", db)
			}
			out, _, err := run(t, "", append([]string{"token", "create", "--db", db}, tt.args...)...)
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
				t.Fatal(err)
			}
			info, err := openStore(t, db).VerifyToken(t.Context(), printedToken(t, out))
			if err != nil {
				t.Fatalf("printed token does not verify: %v", err)
			}
			if info.WorkerID != tt.args[0] {
				t.Errorf("token belongs to %q, want %q", info.WorkerID, tt.args[0])
			}
		})
	}
}

func TestVersion(t *testing.T) {
	if diff := cmp.Diff("helix-org "+version+"\n", mustRun(t, "version")); diff != "" {
		t.Errorf("version output (-want +got):\n%s", diff)
	}
}

// TestServeAddrDefault pins that serve listens on loopback unless told
// otherwise. It reads the flag rather than binding the port.
func TestServeAddrDefault(t *testing.T) {
	tests := []struct {
		name string
		env  string
		want string
	}{
		{name: "default is loopback", env: "", want: "127.0.0.1:8080"},
		{name: "HELIX_ORG_ADDR overrides", env: "0.0.0.0:9090", want: "0.0.0.0:9090"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELIX_ORG_ADDR", tt.env)
			serve, _, err := newRootCmd().Find([]string{"serve"})
			if err != nil {
				t.Fatal(err)
			}
			f := serve.Flags().Lookup("addr")
			if f == nil {
				t.Fatal("serve has no --addr flag")
			}
			if f.DefValue != tt.want {
				t.Errorf("--addr default = %q, want %q", f.DefValue, tt.want)
			}
		})
	}
}
