package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// callOrg is a served org with a human w-maya in p-team holding no grants,
// and the flags that point the CLI at it.
type callOrg struct {
	db, base string
	st       *store.Store
}

func newCallOrg(t *testing.T) callOrg {
	t.Helper()
	db := newDB(t)
	st := openStore(t, db)
	base, _, _ := startServe(t, st, io.Discard)
	if _, err := st.CreatePosition(t.Context(), store.OwnerWorker, domain.Position{ID: "p-team", RoleID: store.OwnerRole, Title: "Team"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.HireWorker(t.Context(), store.OwnerWorker, domain.Worker{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-team", Name: "Maya"}, nil); err != nil {
		t.Fatal(err)
	}
	return callOrg{db: db, base: base, st: st}
}

// cli runs the CLI against the org's database and server.
func (o callOrg) cli(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	out, _, err := run(t, stdin, append(args, "--db", o.db, "--url", o.base)...)
	return out, err
}

// TestCall: every way of passing arguments, every output format, tool
// errors as failures with their text, and the minted token revoked after.
func TestCall(t *testing.T) {
	o := newCallOrg(t)
	tests := []struct {
		name  string
		stdin string
		args  []string
		// want are lines (or parts of lines) stdout must hold; errIs is
		// the whole error instead.
		want  []string
		errIs string
	}{
		{name: "key=value, YAML for an object", args: []string{"call", "create_role", "title=Echo", "content=Reply echo.\nAlways."},
			want: []string{"id: r-echo\n", "title: Echo\n", "content: |-\n  Reply echo.\n  Always.\n"}},
		{name: "a list prints as a table, id first", args: []string{"call", "list_roles"},
			want: []string{"ID       CONTENT", "\nr-echo   Reply echo. … (2 lines)", "\nr-owner  # Owner … (3 lines)"}},
		{name: "JSON arguments, -o json", args: []string{"call", "get_role", `{"id":"r-echo"}`, "-o", "json"},
			want: []string{`  "id": "r-echo",`, `  "title": "Echo",`}},
		{name: "arguments on stdin", stdin: `{"id": "r-owner"}`, args: []string{"call", "get_role", "-", "-o", "yaml"},
			want: []string{"id: r-owner\n"}},
		{name: "a number for a string field stays a string", args: []string{"call", "create_role", "title=2026", "id=r-2026", "content=true"},
			want: []string{"id: r-2026\n", "title: \"2026\"\n", "content: \"true\"\n"}},
		{name: "a JSON value in key=value", args: []string{"call", "read_events", `streams=["s-org"]`, "limit=1"},
			want: []string{"\ncursor: 1\n", "ID  "}},
		{name: "-o table of a list beside a cursor", args: []string{"call", "read_events", `{"streams":["s-org"],"since":1000}`, "-o", "table"},
			want: []string{"No events.\ncursor: 1000\n"}},
		{name: "a tool error fails with its text", args: []string{"call", "publish", "stream=s-nope", "body=x"},
			errIs: `publish: stream "s-nope": not found`},
		{name: "a stream to publish on", args: []string{"call", "create_stream", "id=s-hello", "name=hello"}, want: []string{"id: s-hello\n"}},
		{name: "a tool error is prefixed once, by the tool's name", args: []string{"call", "publish", "stream=s-hello", "body="},
			errIs: `publish: append to s-hello: body: is required`},
		{name: "a tool the worker does not hold", args: []string{"call", "list_roles", "--worker", "w-maya"},
			errIs: `list_roles: missing grant: worker w-maya does not hold grant "list_roles"; a worker with grant_tool can grant it`},
		{name: "a mistyped tool", args: []string{"call", "create_rol", "title=x"},
			errIs: `unknown tool "create_rol"; did you mean "create_role"? (helix-org tools lists the tools you hold)`},
		{name: "a tool nothing is near", args: []string{"call", "frobnicate"},
			errIs: `unknown tool "frobnicate" (helix-org tools lists the tools you hold)`},
		{name: "a word for a list", args: []string{"call", "hire_worker", "kind=human", "name=Bo", "position=p-team", "grants=publish,dm"},
			errIs: `grants: hire_worker takes a list here; write grants='["publish","dm"]'`},
		{name: "a word for a number", args: []string{"call", "read_events", "limit=ten"},
			errIs: `limit: read_events takes a number here, e.g. limit=10`},
		{name: "not an object", args: []string{"call", "list_roles", "[1]"},
			errIs: "argument \"[1]\": want key=value, a JSON object, or - (stdin)"},
		{name: "bad JSON", args: []string{"call", "list_roles", "{nope"},
			errIs: "arguments are not a JSON object: {nope"},
		{name: "an unknown worker", args: []string{"call", "list_roles", "--worker", "w-nobody"},
			errIs: `worker "w-nobody": not found`},
		{name: "an unknown output format", args: []string{"call", "list_roles", "-o", "xml"},
			errIs: `invalid argument "xml" for "-o, --output" flag: valid: json, yaml, table`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := o.cli(t, tt.stdin, tt.args...)
			if tt.errIs != "" {
				if err == nil || err.Error() != tt.errIs {
					t.Fatalf("error = %v\nwant    %s\nstdout:\n%s", err, tt.errIs, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
	live, err := o.st.ListTokens(t.Context(), store.TokenQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range live {
		if tok.Label == "call" {
			t.Errorf("a token call minted is still live: %+v", tok)
		}
	}
	all, _ := o.st.ListTokens(t.Context(), store.TokenQuery{All: true})
	calls := 0
	for _, tok := range all {
		if tok.Label == "call" {
			calls++
		}
	}
	if calls == 0 {
		t.Error("no token labelled call was ever minted")
	}
}

// TestCallWithToken: a token given by flag or environment is used as is:
// the right worker's works, another worker's is refused with why, and
// nothing is minted.
func TestCallWithToken(t *testing.T) {
	o := newCallOrg(t)
	maya := servertest.Token(t, o.st, "w-maya")
	if _, err := o.st.GrantTool(t.Context(), store.OwnerWorker, domain.Grant{WorkerID: "w-maya", Tool: "get_worker"}); err != nil {
		t.Fatal(err)
	}
	before, _ := o.st.ListTokens(t.Context(), store.TokenQuery{All: true})

	out, err := o.cli(t, "", "call", "get_worker", "--worker", "w-maya", "--token", maya)
	if err != nil || !strings.Contains(out, "id: w-maya\n") {
		t.Errorf("call with --token: %v\n%s", err, out)
	}
	t.Setenv(domain.TokenEnv, maya)
	if out, err := o.cli(t, "", "call", "get_worker", "--worker", "w-maya"); err != nil || !strings.Contains(out, "id: w-maya\n") {
		t.Errorf("call with $%s: %v\n%s", domain.TokenEnv, err, out)
	}
	_, err = o.cli(t, "", "call", "get_worker")
	want := o.base + "/workers/w-owner/mcp refused the token: it is not w-owner's (pass --worker), or w-owner has been dismissed"
	if err == nil || err.Error() != want {
		t.Errorf("another worker's token: %v\nwant %s", err, want)
	}
	_, err = o.cli(t, "", "call", "get_worker", "--worker", "w-maya", "--token", store.TokenPrefix+"nope")
	want = o.base + "/workers/w-maya/mcp refused the token: unknown, expired or revoked (helix-org token list)"
	if err == nil || err.Error() != want {
		t.Errorf("an unknown token: %v\nwant %s", err, want)
	}
	after, _ := o.st.ListTokens(t.Context(), store.TokenQuery{All: true})
	if len(after) != len(before) {
		t.Errorf("call with a token minted %d more", len(after)-len(before))
	}
}

// TestCallNoServer: with nothing listening, call says so and where.
func TestCallNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	db := newDB(t)
	mustRun(t, "bootstrap", "--db", db)
	_, _, err = run(t, "", "call", "list_roles", "--db", db, "--url", url)
	want := "nothing answers at " + url + ": is the server running (helix-org serve)? Point --url (or HELIX_ORG_URL) at it"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	toks, _ := openStore(t, db).ListTokens(t.Context(), store.TokenQuery{})
	for _, tok := range toks {
		if tok.Label == "call" {
			t.Errorf("the token minted for a call that never connected is live: %+v", tok)
		}
	}
}

// TestTools: what the worker may call, with arguments; -o json has every
// input schema; a worker with no grants is told so.
func TestTools(t *testing.T) {
	o := newCallOrg(t)
	out, err := o.cli(t, "", "tools")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "TOOL") || !strings.Contains(lines[0], "ARGUMENTS") {
		t.Errorf("header = %q", lines[0])
	}
	var publish string
	for _, l := range lines {
		if strings.HasPrefix(l, "publish ") {
			publish = l
		}
	}
	if !strings.Contains(publish, " body* stream* attachments ") {
		t.Errorf("publish row = %q, want its arguments with stream required", publish)
	}

	out, err = o.cli(t, "", "tools", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools []struct {
			Name        string
			InputSchema struct {
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("tools -o json: %v\n%s", err, out)
	}
	found := false
	for _, tool := range got.Tools {
		if tool.Name == "create_role" {
			found = tool.InputSchema.Properties["title"] != nil
		}
	}
	if !found {
		t.Errorf("tools -o json has no create_role with a title property:\n%s", out)
	}

	out, err = o.cli(t, "", "tools", "--worker", "w-maya")
	if err != nil || out != "No tools: this worker holds no grants (grant_tool gives some).\n" {
		t.Errorf("tools of a worker without grants = %q, %v", out, err)
	}
}

// TestCallMintsOnlyForLoopback: without --token, call mints a token only
// for a server on this machine's loopback, and says how to reach another.
func TestCallMintsOnlyForLoopback(t *testing.T) {
	o := newCallOrg(t)
	for _, url := range []string{"http://10.0.0.1:8080", "https://org.example", "http://[::ffff:10.0.0.1]:8080", "http://127.0.0.1.nip.io:8080", "http://0.0.0.0:8080"} {
		t.Run(url, func(t *testing.T) {
			_, _, err := run(t, "", "call", "list_roles", "--db", o.db, "--url", url)
			want := "--url " + url + " is not this machine: a token is minted only for a server on loopback (127.0.0.1, ::1, localhost); give --token (or HELIX_ORG_TOKEN) to call another server"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
		})
	}
	if toks := callTokens(t, o.st, true); len(toks) != 0 {
		t.Errorf("tokens minted for a server elsewhere: %+v", toks)
	}
	port := o.base[strings.LastIndex(o.base, ":")+1:]
	if out, err := o.cli(t, "", "call", "get_worker", "id=w-owner", "--url", "http://localhost:"+port); err != nil || !strings.Contains(out, "id: w-owner") {
		t.Errorf("call by localhost: %v\n%s", err, out)
	}
}

// TestCallTokenExpiresAtTimeout: the token call mints lives no longer than
// --timeout, so a call killed outright leaves none behind for long.
func TestCallTokenExpiresAtTimeout(t *testing.T) {
	o := newCallOrg(t)
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{{nil, server.DefaultCallTimeout}, {[]string{"--timeout", "90s"}, 90 * time.Second}} {
		before := len(callTokens(t, o.st, true))
		if _, err := o.cli(t, "", append([]string{"call", "list_roles"}, tt.args...)...); err != nil {
			t.Fatal(err)
		}
		toks := callTokens(t, o.st, true)
		if len(toks) != before+1 {
			t.Fatalf("%d call tokens after the call, want %d", len(toks), before+1)
		}
		tok := toks[len(toks)-1]
		if tok.ExpiresAt == nil || tok.RevokedAt == nil {
			t.Errorf("call %v minted %+v; want it expiring and revoked", tt.args, tok)
		} else if lived := tok.ExpiresAt.Sub(tok.CreatedAt); lived < tt.want || lived > tt.want+time.Second {
			t.Errorf("call %v minted a token for %s; want %s (its --timeout)", tt.args, lived, tt.want)
		}
	}
	if _, err := o.cli(t, "", "call", "list_roles", "--timeout", "0s"); err == nil || err.Error() != "--timeout 0s: give a positive duration, e.g. 15m" {
		t.Errorf("--timeout 0s: %v", err)
	}
}

// TestCallRevokesOnSignal: the real binary, its call in flight, is sent
// SIGINT or SIGTERM: it exits, and the token it minted is revoked in the
// store, not left to expire. A proxy in front of the server holds the
// tools/call until the client goes, so "in flight" is certain.
func TestCallRevokesOnSignal(t *testing.T) {
	o := newCallOrg(t)
	target, _ := url.Parse(o.base)
	forward := httputil.NewSingleHostReverseProxy(target)
	held := make(chan struct{}, 1)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			held <- struct{}{}
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			before := len(callTokens(t, o.st, true))
			cmd := exec.Command(exe, "call", "list_roles", "--db", o.db, "--url", proxy.URL)
			cmd.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() { cmd.Process.Kill() })
			select {
			case <-held:
			case err := <-exited:
				t.Fatalf("call exited before its call was held: %v\n%s", err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("the call never reached the server")
			}
			if live := callTokens(t, o.st, false); len(live) != 1 {
				t.Fatalf("live call tokens while the call is in flight: %+v; want its one", live)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("call still running 30s after %s", sig)
			}
			toks := callTokens(t, o.st, true)
			if len(toks) != before+1 || toks[len(toks)-1].RevokedAt == nil {
				t.Errorf("after %s the call tokens are %+v; want its one revoked", sig, toks)
			}
			if live := callTokens(t, o.st, false); len(live) != 0 {
				t.Errorf("live call tokens after %s: %+v", sig, live)
			}
		})
	}
}

// callTokens lists the tokens call minted, oldest first: every one, or
// only the live ones.
func callTokens(t *testing.T, st *store.Store, all bool) []store.Token {
	t.Helper()
	toks, err := st.ListTokens(t.Context(), store.TokenQuery{All: all})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Token
	for _, tok := range toks {
		if tok.Label == "call" {
			out = append(out, tok)
		}
	}
	return out
}

// TestCallHelpStdinExample: an example in call --help that feeds stdin
// passes -, since call reads stdin only then.
func TestCallHelpStdinExample(t *testing.T) {
	out := mustRun(t, "call", "--help")
	found := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "helix-org call ") || !strings.Contains(line, " < ") {
			continue
		}
		found = true
		if !strings.Contains(line, " - ") {
			t.Errorf("example feeds stdin without -, which call would not read:\n%s", line)
		}
	}
	if !found {
		t.Errorf("call --help has no example reading arguments from stdin:\n%s", out)
	}
}

// TestURLNeedsScheme: a --url without http:// is named as such by every
// command that takes the server's base URL, not read as another machine
// or a path.
func TestURLNeedsScheme(t *testing.T) {
	db := newDB(t)
	cmds := [][]string{
		{"call", "list_roles"}, {"tools"}, {"token", "create", "w-owner"}, {"bootstrap"}, {"chat"},
		{"serve", "--bootstrap", "--addr", "127.0.0.1:0"},
	}
	urls := []struct{ url, want string }{
		{"127.0.0.1:18437", "--url 127.0.0.1:18437 has no scheme: use http://127.0.0.1:18437"},
		{"localhost:8080", "--url localhost:8080 has no scheme: use http://localhost:8080"},
		{"ftp://127.0.0.1:8080", "--url ftp://127.0.0.1:8080: give an http:// or https:// URL, e.g. http://127.0.0.1:8080"},
	}
	for _, args := range cmds {
		for _, u := range urls {
			t.Run(strings.Join(args[:min(2, len(args))], " ")+" "+u.url, func(t *testing.T) {
				// Under an ended context, so a command that took the
				// URL (serve) returns at once instead of serving.
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				cmd := newRootCmd()
				cmd.SetArgs(append(args, "--db", db, "--url", u.url))
				cmd.SetIn(strings.NewReader(""))
				cmd.SetOut(io.Discard)
				cmd.SetErr(io.Discard)
				err := cmd.ExecuteContext(ctx)
				if err == nil || err.Error() != u.want {
					t.Errorf("error = %v\nwant    %s", err, u.want)
				}
			})
		}
	}
}

// TestCallToClosedPipe: the real binary with its stdout a pipe whose
// reader is gone (call … | head, head done) ends quietly and revokes the
// token it minted, in every output format, rather than being killed by
// SIGPIPE with the token live.
func TestCallToClosedPipe(t *testing.T) {
	o := newCallOrg(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"yaml", "json", "table"} {
		t.Run(format, func(t *testing.T) {
			before := len(callTokens(t, o.st, true))
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // gone before call writes a byte
			cmd := exec.Command(exe, "call", "read_events", `streams=["s-org"]`, "-o", format, "--db", o.db, "--url", o.base)
			cmd.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
			cmd.Stdout = w
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			w.Close()
			if err != nil || stderr.Len() > 0 {
				t.Errorf("call into a closed pipe: %v; want a quiet exit 0\nstderr: %s", err, stderr.String())
			}
			if n := len(callTokens(t, o.st, true)); n != before+1 {
				t.Fatalf("call minted %d tokens, want 1", n-before)
			}
			if live := callTokens(t, o.st, false); len(live) != 0 {
				t.Errorf("live call tokens after call's reader went away: %+v", live)
			}
		})
	}
}

// TestCallArgTypes: a key=value value that cannot be its property's type
// is refused with the syntax to use; one that can is passed on.
func TestCallArgTypes(t *testing.T) {
	types := func() map[string]string {
		return map[string]string{"to": "array", "extra": "object", "n": "integer", "wait": "number", "urgent": "boolean", "body": "string"}
	}
	tests := []struct{ arg, errIs string }{
		{"to=w-maya", `to: t takes a list here; write to='["w-maya"]'`},
		{"to=", `to: t takes a list here; write to='[]'`},
		{"extra=x", `extra: t takes an object here; write extra='{"name":"value"}'`},
		{"n=three", `n: t takes a number here, e.g. n=10`},
		{`wait="5"`, `wait: t takes a number here, e.g. wait=10`},
		{"urgent=yes", `urgent: t takes true or false here, e.g. urgent=true`},
		{`to=["w-maya"]`, ""},
		{"to=null", ""},
		{`extra={"k":1}`, ""},
		{"n=3", ""},
		{"urgent=false", ""},
		{"body=[1]", ""},
		{"other=anything", ""},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, err := callArgs("t", nil, []string{tt.arg}, types)
			if got := fmt.Sprint(err); (tt.errIs == "" && err != nil) || (tt.errIs != "" && got != tt.errIs) {
				t.Errorf("error = %v\nwant    %s", err, cmp.Or(tt.errIs, "none"))
			}
		})
	}
}
