package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// newDB creates an empty database, as --init would, and returns its path.
func newDB(t *testing.T) string {
	t.Helper()
	db := tempDB(t)
	st, err := store.Open(t.Context(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return db
}

// openStore opens the database the CLI wrote, as a running server would.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
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

// TestBootstrapMintsOnce: the first bootstrap creates the owner and prints
// its token; later ones (every make run) mint no long-lived token, keep
// the first working and say how to get another; --new-token mints one.
func TestBootstrapMintsOnce(t *testing.T) {
	db := tempDB(t)
	first := printedToken(t, mustRun(t, "bootstrap", "--init", "--db", db))
	again := mustRun(t, "bootstrap", "--db", db, "--url", "http://org.example:9000")
	for _, want := range []string{
		"Web UI:    http://org.example:9000/ui/signin?code=" + store.SignInCodePrefix,
		"MCP URL:   http://org.example:9000/workers/w-owner/mcp\n",
		"Token:     none minted; w-owner's 1 token keeps working (helix-org token list shows it)\n",
		"           mint another with: helix-org bootstrap --new-token [--ttl 24h]  (or: helix-org token create w-owner)\n",
	} {
		if !strings.Contains(again, want) {
			t.Errorf("second bootstrap lacks %q:\n%s", want, again)
		}
	}
	if strings.Contains(again, store.TokenPrefix) {
		t.Errorf("second bootstrap printed a token:\n%s", again)
	}

	st := openStore(t, db)
	if info, err := st.VerifyToken(t.Context(), first); err != nil || info.WorkerID != store.OwnerWorker {
		t.Errorf("the first token after a second bootstrap: %+v, %v; want w-owner's, still valid", info, err)
	}
	if n := longLived(t, st); n != 1 {
		t.Errorf("%d tokens without expiry after two bootstraps, want 1", n)
	}

	if _, _, err := run(t, "", "bootstrap", "--db", db, "--ttl", "1h"); err == nil || err.Error() != "--ttl is for a token minted now, and w-owner exists: add --new-token" {
		t.Errorf("bootstrap --ttl without --new-token: %v", err)
	}
	minted := printedToken(t, mustRun(t, "bootstrap", "--db", db, "--new-token", "--ttl", "1h"))
	if minted == first {
		t.Error("--new-token printed the first token again")
	}
	if _, err := st.VerifyToken(t.Context(), minted); err != nil {
		t.Errorf("the --new-token token: %v", err)
	}
	if n := longLived(t, st); n != 1 {
		t.Errorf("%d tokens without expiry after --new-token --ttl 1h, want still 1", n)
	}

	workers, err := st.ListWorkers(t.Context(), store.WorkerFilter{IncludeDismissed: true})
	if err != nil || len(workers) != 1 || workers[0].ID != store.OwnerWorker {
		t.Errorf("workers after three bootstraps = %+v (%v), want only w-owner", workers, err)
	}
	grants, err := st.ListGrants(t.Context(), store.OwnerWorker)
	if err != nil || len(grants) != len(tools.Names()) {
		t.Errorf("owner holds %d grants after three bootstraps (%v), want one per tool (%d)", len(grants), err, len(tools.Names()))
	}
}

// TestBootstrapCountsYourTokens: a later bootstrap counts the tokens the
// user minted, not the web sign-in, call and chat tokens the CLI minted
// for itself, which once made one token read as "the 9 live token(s)".
func TestBootstrapCountsYourTokens(t *testing.T) {
	tests := []struct {
		name   string
		extra  []store.TokenSpec
		revoke bool // the first bootstrap's token
		want   string
	}{
		{name: "after make run twice", want: "none minted; w-owner's 1 token keeps working (helix-org token list shows it)"},
		{name: "the CLI's own tokens are not counted", extra: []store.TokenSpec{
			{Label: "web sign-in", TTL: time.Hour}, {Label: "web sign-in", TTL: time.Hour}, {Label: "call", TTL: time.Hour}, {Label: "chat", TTL: time.Hour},
		}, want: "none minted; w-owner's 1 token keeps working (helix-org token list shows it)"},
		{name: "token create counts", extra: []store.TokenSpec{{Label: "token create"}, {Label: "call", TTL: time.Hour}},
			want: "none minted; w-owner's 2 tokens keep working (helix-org token list shows them)"},
		{name: "only sign-ins left", extra: []store.TokenSpec{{Label: "web sign-in", TTL: time.Hour}}, revoke: true,
			want: "none minted, and w-owner has no token of yours left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tempDB(t)
			first := printedToken(t, mustRun(t, "bootstrap", "--init", "--db", db))
			// A second run mints a web sign-in token, which the third sees.
			mustRun(t, "bootstrap", "--db", db)
			st := openStore(t, db)
			for _, spec := range tt.extra {
				spec.WorkerID, spec.Kind = store.OwnerWorker, store.TokenOperator
				if _, err := st.CreateToken(t.Context(), spec); err != nil {
					t.Fatal(err)
				}
			}
			if tt.revoke {
				if err := st.RevokeToken(t.Context(), first); err != nil {
					t.Fatal(err)
				}
			}
			out := mustRun(t, "bootstrap", "--db", db)
			got := ""
			if m := haveLine.FindStringSubmatch(out); m != nil {
				got = m[1]
			}
			if got != tt.want {
				t.Errorf("Token: line = %q, want %q\n%s", got, tt.want, out)
			}
		})
	}
}

// TestBootstrapDropsUnusedSignIns: each later bootstrap mints a token for
// its sign-in link; the links never followed no longer leave theirs live
// (one per make run, 12 hours each), while a signed-in browser's stays.
func TestBootstrapDropsUnusedSignIns(t *testing.T) {
	db := tempDB(t)
	mustRun(t, "bootstrap", "--init", "--db", db)
	signIns := func() int {
		var listed struct{ Tokens []store.Token }
		if err := json.Unmarshal([]byte(mustRun(t, "token", "list", "--db", db, "-o", "json")), &listed); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tok := range listed.Tokens {
			if tok.Label == "web sign-in" {
				n++
			}
		}
		return n
	}
	code := signInCode.FindStringSubmatch(mustRun(t, "bootstrap", "--db", db))
	if code == nil {
		t.Fatal("no sign-in link in the second bootstrap's output")
	}
	if _, _, err := openStore(t, db).SignInWithCode(t.Context(), code[1], time.Hour); err != nil {
		t.Fatalf("following the link: %v", err)
	}
	tests := []struct {
		name string
		want int
	}{
		{"third run: the followed link's and its own", 2},
		{"fourth run: the third's link, never followed, is dropped", 2},
		{"fifth run: likewise", 2},
	}
	for _, tt := range tests {
		mustRun(t, "bootstrap", "--db", db)
		if got := signIns(); got != tt.want {
			t.Errorf("%s: token list shows %d web sign-in tokens, want %d", tt.name, got, tt.want)
		}
	}
}

var signInCode = regexp.MustCompile(`/ui/signin\?code=(\S+)`)

var haveLine = regexp.MustCompile(`(?m)^Token:\s+(.*)$`)

// longLived counts live tokens that never expire.
func longLived(t *testing.T, st *store.Store) int {
	t.Helper()
	toks, err := st.ListTokens(t.Context(), store.TokenQuery{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tok := range toks {
		if tok.ExpiresAt == nil {
			n++
		}
	}
	return n
}

func TestBootstrapPrintsConnectDetails(t *testing.T) {
	out := mustRun(t, "bootstrap", "--init", "--db", tempDB(t), "--url", "http://org.example:9000")
	for _, want := range []string{
		"Web UI:    http://org.example:9000/ui/signin?code=" + store.SignInCodePrefix,
		"Worker:    w-owner",
		"MCP URL:   http://org.example:9000/workers/w-owner/mcp",
		"claude mcp add --transport http helix-org-w-owner http://org.example:9000/workers/w-owner/mcp",
		`"helix-org-w-owner": {`,
		`"Authorization": "Bearer ` + store.TokenPrefix,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bootstrap output lacks %q:\n%s", want, out)
		}
	}
}

// TestBootstrapRefusesWithoutInit: bootstrap in the wrong directory says
// where it looked and creates nothing.
func TestBootstrapRefusesWithoutInit(t *testing.T) {
	db := tempDB(t)
	_, _, err := run(t, "", "bootstrap", "--db", db)
	want := "no database at " + db + ": run where it is, point --db (or HELIX_ORG_DB) at it, or pass --init to create a new one"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused bootstrap created %s", db)
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
		{name: "no database at --db", args: []string{"w-owner"}, wantErr: []string{"no database at ", "helix-org bootstrap --init"}},
		{name: "no worker given", args: nil, wantErr: []string{"accepts 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tempDB(t)
			if tt.bootstrap {
				mustRun(t, "bootstrap", "--init", "--db", db)
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
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if diff := cmp.Diff("helix-org "+version+"\n", mustRun(t, args...)); diff != "" {
			t.Errorf("%v output (-want +got):\n%s", args, diff)
		}
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
