package main

import (
	"bufio"
	"context"
	"database/sql"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// orgSite is one org as its operator and its owner reach it in the test.
type orgSite struct {
	name  string
	url   string // the org's base URL, /orgs/<name> on the server
	owner *mcp.ClientSession
	token string
	web   *http.Client
}

// newOrgSite creates the org with `orgs create`, bootstraps its owner with
// `--org <name> bootstrap` (as an operator would, against the running
// server) and signs its owner in to the web UI with the printed link.
func newOrgSite(t *testing.T, db, key, base, name string) *orgSite {
	t.Helper()
	return newOrgSiteFrom(t, db, key, base, name, true)
}

// newOrgSiteFrom is newOrgSite, creating the org only if create.
func newOrgSiteFrom(t *testing.T, db, key, base, name string, create bool) *orgSite {
	t.Helper()
	if create {
		mustRun(t, "orgs", "create", name, "--db", db, "--key-file", key)
	}
	out := mustRun(t, "--org", name, "bootstrap", "--db", db, "--key-file", key, "--url", base)
	o := &orgSite{name: name, url: base + "/orgs/" + name, token: printedToken(t, out)}
	if want := "MCP URL:   " + o.url + "/workers/w-owner/mcp"; !strings.Contains(out, want) {
		t.Fatalf("bootstrap in org %s printed no %q:\n%s", name, want, out)
	}
	link := regexp.MustCompile(`Web UI:\s+(\S+)`).FindStringSubmatch(out)
	if link == nil || !strings.HasPrefix(link[1], o.url+"/ui/signin?code=") {
		t.Fatalf("bootstrap in org %s printed no sign-in link under %s:\n%s", name, o.url, out)
	}
	var err error
	if o.owner, err = servertest.Dial(t, o.url+"/workers/w-owner/mcp", o.token); err != nil {
		t.Fatalf("org %s's owner connecting: %v", name, err)
	}
	jar, _ := cookiejar.New(nil)
	o.web = &http.Client{Jar: jar}
	o.signIn(t, link[1])
	return o
}

// signIn opens a one-click link and posts its form, as its button does.
func (o *orgSite) signIn(t *testing.T, link string) {
	t.Helper()
	page := o.get(t, link, http.StatusOK)
	form := url.Values{}
	for _, name := range []string{"csrf", "next", "code"} {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("org %s's sign-in page has no %s field:\n%s", o.name, name, page)
		}
		form.Set(name, html.UnescapeString(m[1]))
	}
	resp, err := o.web.PostForm(o.url+"/ui/signin", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/orgs/"+o.name+"/ui/" {
		t.Fatalf("org %s's sign-in landed on %s (%d), want its org page", o.name, resp.Request.URL, resp.StatusCode)
	}
}

// get fetches url with the org's browser and wants status.
func (o *orgSite) get(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := o.web.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d:\n%s", url, resp.StatusCode, status, b)
	}
	return string(b)
}

func (o *orgSite) call(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	return servertest.Call[map[string]any](t, o.owner, tool, args)
}

// TestSeveralOrgsOnOneServer: two orgs beside the default on one server,
// the second created while it runs. The same steps — bootstrap, hire,
// publish, read, the web UI — work in each under /orgs/<name>/, and
// nothing of one reaches the other: a token, a session cookie, an event
// in read_events or in a live view.
func TestSeveralOrgsOnOneServer(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north", "south")
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}, metricsLn: mln}
	// north exists before the server starts; south is created while it runs.
	mustRun(t, "orgs", "create", "north", "--db", db, "--key-file", key)
	base, _, _ := startServeWith(t, st, io.Discard, cfg)
	if _, _, err := run(t, "", "orgs", "create", "north", "--db", db, "--key-file", key); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("creating north again: %v; want it refused as existing", err)
	}
	resp, err := http.Get(base + "/orgs/south/ui/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("south before it is created: %d %s, want 404", resp.StatusCode, b)
	}
	north := bootstrapCreated(t, db, key, base, "north")
	south := newOrgSite(t, db, key, base, "south")
	if out := mustRun(t, "orgs", "list", "--db", db, "--key-file", key); !regexp.MustCompile(`(?s)\(default\)\s+/\s+served\n.*north\s+/orgs/north/\s+served\n.*south\s+/orgs/south/\s+served\n`).MatchString(out) {
		t.Errorf("orgs list:\n%s\nwant the default, north and south", out)
	}

	// The same steps in each org, with the same ids.
	for _, o := range []*orgSite{north, south} {
		o.call(t, "create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Reply on the stream."})
		o.call(t, "create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
		o.call(t, "hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo " + o.name})
		o.call(t, "create_stream", map[string]any{"id": "s-hello", "name": "hello"})
		o.call(t, "subscribe", map[string]any{"stream": "s-hello"})
		page := o.get(t, o.url+"/ui/", http.StatusOK)
		if !strings.Contains(page, "Echo "+o.name) {
			t.Errorf("org %s's org page does not show its own worker", o.name)
		}
		if bare := regexp.MustCompile(`(href|action|src)="/ui/`).FindString(page); bare != "" {
			t.Errorf("org %s's org page links outside the org: %s", o.name, bare)
		}
		if !strings.Contains(page, `href="/orgs/`+o.name+`/ui/streams"`) {
			t.Errorf("org %s's org page has no link to its streams page under /orgs/%s/", o.name, o.name)
		}
		o.call(t, "create_position", map[string]any{"id": "p-support", "role": "r-echo", "title": "Support"})
		inv := o.call(t, "invite", map[string]any{"email": "lee@example.com", "position": "p-support"})
		if link, _ := inv["link"].(string); link != "/orgs/"+o.name+"/ui/signin?invitation="+inv["id"].(string) {
			t.Errorf("org %s's invitation link = %q, want it under /orgs/%s/", o.name, link, o.name)
		}
	}

	t.Run("token", func(t *testing.T) {
		// north's token at south's endpoint (same worker id), and at the
		// default org's.
		for _, u := range []string{south.url + "/workers/w-owner/mcp", base + "/workers/w-owner/mcp"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+north.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("north's token at %s: %d %s; want 401", u, resp.StatusCode, b)
			}
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// The operator's metrics listener serves each org's own, without
		// a token; only north and south created roles.
		created := `helix_org_mcp_tool_calls_total{outcome="ok",tool="create_role"}`
		for _, tc := range []struct {
			name, path  string
			want        int
			has, hasNot string
		}{
			{"north's", "/orgs/north/metrics", 200, created, ""},
			{"south's", "/orgs/south/metrics", 200, created, ""},
			{"the default org's", "/metrics", 200, "helix_org_http_requests_total", created},
			{"an org not created", "/orgs/east/metrics", 404, "no org named east on this server", ""},
			{"not an org name", "/orgs/East_1/metrics", 404, "is not an org name", ""},
		} {
			code, body := scrape(t, "http://"+mln.Addr().String()+tc.path, "")
			if code != tc.want || !strings.Contains(body, tc.has) || (tc.hasNot != "" && strings.Contains(body, tc.hasNot)) {
				t.Errorf("%s (%s): %d, want %d with %q and without %q:\n%.400s", tc.name, tc.path, code, tc.want, tc.has, tc.hasNot, body)
			}
		}
	})

	t.Run("session", func(t *testing.T) {
		nu, _ := url.Parse(north.url + "/ui/")
		cookies := north.web.Jar.Cookies(nu)
		if len(cookies) == 0 {
			t.Fatal("north's browser holds no cookie for north")
		}
		su, _ := url.Parse(south.url + "/ui/")
		for _, c := range north.web.Jar.Cookies(su) {
			t.Errorf("north's browser would send its cookie %s to south: its path is not north's", c.Name)
		}
		// Sent by hand to south, and to the default org, it signs nobody in.
		for _, u := range []string{south.url + "/ui/", base + "/ui/"} {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			for _, c := range cookies {
				req.AddCookie(c)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/ui/signin") {
				t.Errorf("north's session cookie at %s: %d to %q; want a redirect to sign in", u, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})

	t.Run("events", func(t *testing.T) {
		page := south.get(t, south.url+"/ui/streams/s-hello", http.StatusOK)
		m := regexp.MustCompile(`data-live="([^"]+)"`).FindStringSubmatch(page)
		if m == nil || !strings.HasPrefix(html.UnescapeString(m[1]), "/orgs/south/ui/live?") {
			t.Fatalf("south's stream page names no live view under /orgs/south/: %v", m)
		}
		live := openOrgLive(t, south.web, base+html.UnescapeString(m[1]))
		north.call(t, "publish", map[string]any{"stream": "s-hello", "body": "only-north-7c1"})
		south.call(t, "publish", map[string]any{"stream": "s-hello", "body": "only-south-4e9"})
		// south's event comes after north's: had north's crossed, the live
		// view would have shown it first.
		seen := live.until(t, "only-south-4e9")
		if strings.Contains(seen, "only-north-7c1") {
			t.Errorf("south's live view showed north's event:\n%s", seen)
		}
		for _, o := range []*orgSite{north, south} {
			got := servertest.Call[struct {
				Events []domain.Event `json:"events"`
			}](t, o.owner, "read_events", map[string]any{"streams": []string{"s-hello"}, "since": 0})
			var bodies []string
			for _, ev := range got.Events {
				bodies = append(bodies, ev.Message.Body)
			}
			want := "only-" + o.name
			if len(bodies) != 1 || !strings.Contains(bodies[0], want) {
				t.Errorf("org %s read_events on s-hello: %q; want only its own event", o.name, bodies)
			}
		}
	})
}

// TestSeveralOrgsRunAgents: each org's dispatcher wakes its own AI worker,
// which reaches its MCP endpoint under the org's prefix and answers on
// its own org's stream — the same worker id in both.
func TestSeveralOrgsRunAgents(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north", "south")
	base, _, _ := startServeWith(t, st, io.Discard, serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}})
	for _, name := range []string{"north", "south"} {
		o := newOrgSite(t, db, key, base, name)
		mustRun(t, "--org", name, "config", "set", "agent.runtime", "command", "--db", db, "--key-file", key)
		mustRun(t, "--org", name, "config", "set", "agent.command", agentCommand(t, "echo"), "--db", db, "--key-file", key)
		o.call(t, "create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
		o.call(t, "create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
		o.call(t, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
		o.call(t, "hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
		o.call(t, "invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
		hello := servertest.Call[domain.Event](t, o.owner, "publish", map[string]any{"stream": "s-inbox", "body": "hello " + name})
		reply := waitForReply(t, o.owner, "s-inbox", "w-echo", hello.Seq)
		if reply.Message.Body != "echo: hello "+name {
			t.Errorf("org %s's echo replied %q, want echo: hello %s", name, reply.Message.Body, name)
		}
	}
}

// orgsDB opens the default org's database for a test of several orgs: a
// SQLite file, or under HELIX_ORG_TEST_DB=postgres a PostgreSQL database,
// beside which the named orgs' databases are dropped when t ends; key is
// the key file PostgreSQL needs.
func orgsDB(t *testing.T, orgs ...string) (db, key string, st *store.Store) {
	t.Helper()
	dir := t.TempDir()
	db = filepath.Join(dir, "helix-org.db")
	if storetest.UsePostgres() {
		db, key = storetest.PostgresURL(t), filepath.Join(dir, "helix-org.key")
		t.Cleanup(func() { dropOrgDatabases(t, db, orgs...) })
	}
	st, err := store.Open(t.Context(), db, store.Options{KeyFile: key, Transports: transports.Specs(), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return db, key, st
}

// bootstrapCreated is newOrgSite for an org already created.
func bootstrapCreated(t *testing.T, db, key, base, name string) *orgSite {
	t.Helper()
	return newOrgSiteFrom(t, db, key, base, name, false)
}

// liveStream reads a live view's Server-Sent Events.
type liveStream struct {
	lines chan string
}

func openOrgLive(t *testing.T, c *http.Client, url string) *liveStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("live view %s: %d", url, resp.StatusCode)
	}
	s := &liveStream{lines: make(chan string, 1024)}
	go func() {
		defer close(s.lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	return s
}

// until returns everything the view sent up to the line holding want.
func (s *liveStream) until(t *testing.T, want string) string {
	t.Helper()
	var seen strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("the live view ended before %q:\n%s", want, seen.String())
			}
			seen.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return seen.String()
			}
		case <-timeout:
			t.Fatalf("no %q on the live view within 30s:\n%s", want, seen.String())
		}
	}
}

// openOrgStore opens the named org's database beside db, as another
// process would (the CLI, another server), until t ends.
func openOrgStore(t *testing.T, db, key, name string) *store.Store {
	t.Helper()
	of, err := dbFlags{DB: db, KeyFile: key}.forOrg(name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), of.DB, store.Options{KeyFile: of.KeyFile, Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// ends waits for the server to end the live view, reading what it sends
// meanwhile.
func (s *liveStream) ends(t *testing.T, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case _, ok := <-s.lines:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("the live view was still open %s later", within)
		}
	}
}

// dropOrgDatabases drops the PostgreSQL databases `orgs create` made
// beside the test's default one.
func dropOrgDatabases(t *testing.T, defURL string, names ...string) {
	u, _ := url.Parse(defURL)
	admin, err := sql.Open("pgx", defURL)
	if err != nil {
		t.Errorf("drop org databases: %v", err)
		return
	}
	defer admin.Close()
	for _, n := range names {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + pgOrgDB(strings.TrimPrefix(u.Path, "/"), n) + " WITH (FORCE)"); err != nil {
			t.Errorf("drop org %s's database: %v", n, err)
		}
	}
}

// TestOrgsBadInput: every wrong name or use of --org is refused with an
// error that names what is wrong, and creates nothing.
func TestOrgsBadInput(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"upper case", []string{"orgs", "create", "Acme", "--db", db}, `org: "Acme" is not an org name`},
		{"path", []string{"orgs", "create", "../x", "--db", db}, `org: "../x" is not an org name`},
		{"no name", []string{"orgs", "create", "--db", db}, "accepts 1 arg"},
		{"bad --org", []string{"--org", "a_b", "config", "list", "--db", db}, `--org: org: "a_b" is not an org name`},
		{"--org not created", []string{"--org", "ghost", "config", "list", "--db", db}, "no org named ghost"},
		{"serve with --org", []string{"--org", "acme", "serve", "--db", db, "--addr", "127.0.0.1:0"}, "serve serves every org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helix-org %s: %v; want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
	if names, err := listOrgs(t.Context(), dbFlags{DB: db}); err != nil || len(names) != 0 {
		t.Errorf("orgs after the refusals: %v, %v; want none", names, err)
	}
}

// TestArchiveAnOrg: an operator archives an org while the server runs
// it. With no request, the server stops its runs; its pages, MCP
// endpoints and metrics answer 410 saying how to restore it; `orgs list`
// shows it archived. Nothing is lost: a trigger that arrives meanwhile
// waits, and once it is restored its AI worker answers it, beside
// everything stored before.
func TestArchiveAnOrg(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north")
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &demoLogBuffer{}
	base, _, _ := startServeWith(t, st, logs, serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}, metricsLn: mln})
	north := newOrgSite(t, db, key, base, "north")
	with := []string{"--db", db, "--key-file", key}
	mustRun(t, append([]string{"--org", "north", "config", "set", "agent.runtime", "command"}, with...)...)
	mustRun(t, append([]string{"--org", "north", "config", "set", "agent.command", agentCommand(t, "echo")}, with...)...)
	north.call(t, "create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "When a message arrives, reply `echo: <body>` on the same stream."})
	north.call(t, "create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	north.call(t, "create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	north.call(t, "hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	north.call(t, "invite_workers", map[string]any{"stream": "s-inbox", "workers": []string{"w-echo", "w-owner"}})
	before := servertest.Call[domain.Event](t, north.owner, "publish", map[string]any{"stream": "s-inbox", "body": "before"})
	waitForReply(t, north.owner, "s-inbox", "w-echo", before.Seq)

	// A page of north open in a browser, with its live view.
	page := north.get(t, north.url+"/ui/streams/s-inbox", http.StatusOK)
	m := regexp.MustCompile(`data-live="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("north's stream page has no live view")
	}
	live := openOrgLive(t, north.web, base+html.UnescapeString(m[1]))

	out := mustRun(t, append([]string{"orgs", "archive", "north"}, with...)...)
	if !regexp.MustCompile(`^archived org north at \S+: a running server lets its runs finish \(up to its --shutdown-grace\), then stops it and answers 410 at /orgs/north/; its data stays in \S+; helix-org orgs restore north serves it again\n$`).MatchString(out) {
		t.Errorf("orgs archive printed:\n%s", out)
	}
	// No request comes: the server finds out by itself and stops north.
	logs.waitFor(t, `msg="org archived: stopped" component=orgs org=north`, 30*time.Second)
	// The live view ends with it (the page reconnects, to a 410).
	live.ends(t, 10*time.Second)

	// A trigger that reaches north's database while it is archived (its
	// dispatcher is stopped) waits for it.
	waiting, err := openOrgStore(t, db, key, "north").Append(t.Context(), domain.Event{StreamID: "s-inbox", Source: "w-owner", Message: domain.Message{Body: "while archived"}}, store.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}

	gone := "org north was archived on "
	restore := "an operator restores it with `helix-org orgs restore north`"
	for _, u := range []string{north.url + "/ui/", north.url + "/webhooks/s-inbox", "http://" + mln.Addr().String() + "/orgs/north/metrics"} {
		code, body := scrape(t, u, "")
		if code != http.StatusGone || !strings.Contains(body, gone) || !strings.Contains(body, restore) {
			t.Errorf("GET %s while north is archived: %d %q, want 410 saying so and how to restore it", u, code, body)
		}
	}
	if _, err := north.owner.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_events", Arguments: map[string]any{"streams": []string{"s-inbox"}}}); err == nil || !strings.Contains(err.Error(), "Gone") {
		t.Errorf("north's owner calling a tool while it is archived: %v, want a 410", err)
	}
	if code, body := scrape(t, base+"/ui/signin", ""); code != http.StatusOK {
		t.Errorf("the default org while north is archived: %d %.200s", code, body)
	}
	if out := mustRun(t, append([]string{"orgs", "list"}, with...)...); !regexp.MustCompile(`(?m)^north\s+/orgs/north/\s+archived 20\d\d-`).MatchString(out) {
		t.Errorf("orgs list while north is archived:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"orgs", "archive", "north"}, "org north: archive: conflict: it has been archived since 20"},
		{[]string{"orgs", "archive", "ghost"}, "no org named ghost"},
		{[]string{"orgs", "archive", "North"}, `"North" is not an org name`},
		{[]string{"orgs", "archive"}, "accepts 1 arg"},
		{[]string{"--org", "north", "call", "read_events", "--url", base}, "/orgs/north/workers/w-owner/mcp answers 410 Gone: org north is archived (helix-org orgs list says since when); helix-org orgs restore north serves it again"},
	} {
		if _, _, err := run(t, "", append(tc.args, with...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helix-org %s: %v, want an error containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}

	out = mustRun(t, append([]string{"orgs", "restore", "north"}, with...)...)
	if want := "restored org north: a running server serves it again at /orgs/north/ from its next request\n"; out != want {
		t.Errorf("orgs restore printed %q, want %q", out, want)
	}
	owner, err := servertest.Dial(t, north.url+"/workers/w-owner/mcp", north.token)
	if err != nil {
		t.Fatalf("north's owner after the restore: %v", err)
	}
	if reply := waitForReply(t, owner, "s-inbox", "w-echo", waiting.Seq); reply.Message.Body != "echo: while archived" {
		t.Errorf("after the restore w-echo replied %q, want echo: while archived", reply.Message.Body)
	}
	got := servertest.Call[struct {
		Events []domain.Event `json:"events"`
	}](t, owner, "read_events", map[string]any{"streams": []string{"s-inbox"}, "since": 0})
	var bodies []string
	for _, ev := range got.Events {
		bodies = append(bodies, ev.Message.Body)
	}
	if want := []string{"before", "echo: before", "while archived", "echo: while archived"}; !slices.Equal(bodies, want) {
		t.Errorf("s-inbox after the restore: %q, want %q", bodies, want)
	}
	if out := mustRun(t, append([]string{"orgs", "list"}, with...)...); !regexp.MustCompile(`(?m)^north\s+/orgs/north/\s+served$`).MatchString(out) {
		t.Errorf("orgs list after the restore:\n%s", out)
	}
	if _, _, err := run(t, "", append([]string{"orgs", "restore", "north"}, with...)...); err == nil || !strings.Contains(err.Error(), "org north: restore: conflict: it is not archived") {
		t.Errorf("restoring north twice: %v, want it refused as not archived", err)
	}
}

// TestArchiveInterruptsRuns: a run in flight when its org is archived
// has the shutdown grace to finish; one still going after it is
// interrupted, and its trigger waits: once the org is restored, the run
// is made again.
func TestArchiveInterruptsRuns(t *testing.T) {
	t.Parallel()
	db, key, st := orgsDB(t, "north")
	logs := &demoLogBuffer{}
	base, envs, _ := startServeWith(t, st, logs, serveConfig{dbFlags: dbFlags{DB: db, KeyFile: key}})
	north := newOrgSite(t, db, key, base, "north")
	with := []string{"--db", db, "--key-file", key}
	envs = orgEnvs(envs, "north")
	nst := openOrgStore(t, db, key, "north")
	shareWithAgents(t, nst, envs) // for ../handled.log and ../release
	mustRun(t, append([]string{"--org", "north", "config", "set", "agent.runtime", "command"}, with...)...)
	mustRun(t, append([]string{"--org", "north", "config", "set", "agent.command", agentCommand(t, "slow")}, with...)...)
	north.call(t, "create_role", map[string]any{"id": "r-slow", "title": "Slow", "content": "Take your time."})
	north.call(t, "create_position", map[string]any{"id": "p-slow", "role": "r-slow", "title": "Slow"})
	// Being hired wakes w-slow, whose run holds until ../release exists.
	north.call(t, "hire_worker", map[string]any{"id": "w-slow", "position": "p-slow", "kind": "ai", "name": "Slow"})
	handled, release := filepath.Join(envs, "handled.log"), filepath.Join(envs, "release")
	started := func(state string) func() bool {
		return func() bool {
			return slices.ContainsFunc(readHandled(t, handled), func(l handledLine) bool { return l.state == state })
		}
	}
	until(t, time.Minute, "w-slow's run to start", started("start"))

	mustRun(t, append([]string{"orgs", "archive", "north"}, with...)...)
	logs.waitFor(t, `msg="org archived: stopped" component=orgs org=north`, 30*time.Second)
	acts, err := nst.ListActivations(t.Context(), "w-slow")
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 1 || acts[0].Status != domain.ActivationInterrupted {
		t.Fatalf("w-slow's runs once north is archived: %+v, want one, interrupted", acts)
	}
	if n, err := nst.PendingTriggers(t.Context()); err != nil || n == 0 {
		t.Fatalf("pending triggers once north is archived: %d, %v; want the interrupted run's", n, err)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, append([]string{"orgs", "restore", "north"}, with...)...)
	if code, body := scrape(t, north.url+"/ui/signin", ""); code != http.StatusOK {
		t.Fatalf("north's sign-in page after the restore: %d %.200s", code, body)
	}
	until(t, time.Minute, "w-slow's run to be made again", func() bool {
		n, err := nst.PendingTriggers(t.Context())
		return err == nil && n == 0 && started("done")()
	})
	acts, err = nst.ListActivations(t.Context(), "w-slow")
	if err != nil {
		t.Fatal(err)
	}
	var statuses []domain.ActivationStatus
	for _, a := range acts {
		statuses = append(statuses, a.Status)
	}
	if !slices.Contains(statuses, domain.ActivationSucceeded) || !slices.Contains(statuses, domain.ActivationInterrupted) {
		t.Errorf("w-slow's runs after the restore: %v, want the interrupted one and one that succeeded", statuses)
	}
}
