package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/tools"
)

// TestEveryCallIsAudited: a call over MCP answered by the server's fast
// path, one answered by the go-sdk, one from the web UI, a call the
// approval gate holds and a call refused for want of a grant each leave
// exactly one audit record, with its status, and a secret argument only
// as [redacted]; the Calls page shows them to the owner.
func TestEveryCallIsAudited(t *testing.T) {
	st := storetest.NewWith(t, store.Options{Transports: servertest.Transports})
	if _, err := st.Bootstrap(t.Context(), tools.Names()); err != nil {
		t.Fatal(err)
	}
	direct := server.New(st, server.Config{})
	viaSDK := server.New(st, server.Config{})
	viaSDK.ServeCallsViaSDK()
	hd, hs := httptest.NewServer(direct), httptest.NewServer(viaSDK)
	t.Cleanup(hd.Close)
	t.Cleanup(hs.Close)
	h := &servertest.Harness{Store: st, Server: hd, OwnerToken: servertest.Token(t, st, store.OwnerWorker)}
	owner := h.Owner(t)
	servertest.Call[any](t, owner, "create_stream", map[string]any{"id": "s-news", "name": "news"})
	servertest.Call[any](t, owner, "create_role", map[string]any{"id": "r-staff", "title": "Staff", "content": "Work."})
	servertest.Call[any](t, owner, "create_position", map[string]any{"id": "p-staff", "role": "r-staff", "title": "Staff"})
	servertest.Call[any](t, owner, "hire_worker", map[string]any{"id": "w-maya", "position": "p-staff", "kind": "human", "name": "Maya",
		"grants": []string{"publish"}})
	servertest.Call[any](t, owner, "grant_tool", map[string]any{"worker": "w-maya", "tool": "publish", "approval": "required"})
	maya := h.Connect(t, "w-maya", servertest.Token(t, st, "w-maya"))
	ownerSDK, err := servertest.Dial(t, domain.MCPURL(hs.URL, store.OwnerWorker), h.OwnerToken)
	if err != nil {
		t.Fatal(err)
	}
	web := signedIn(t, h)
	_, _, page := send(t, web, http.MethodGet, hd.URL+"/ui/streams/s-news", "", "", nil)
	_, rest, _ := strings.Cut(page, `<meta name="csrf-token" content="`)
	csrf, _, _ := strings.Cut(rest, `"`)
	if err := st.FlushCalls(t.Context()); err != nil {
		t.Fatal(err)
	}
	before, err := st.ListCalls(t.Context(), store.CallFilter{Limit: 1})
	if err != nil || len(before) != 1 {
		t.Fatalf("the calls made setting up: %v, %v", before, err)
	}

	const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="
	hook := func(id string) map[string]any {
		return map[string]any{"id": id, "name": id, "transport": map[string]any{"kind": "webhook", "config": map[string]any{"secret": secret}}}
	}
	servertest.Call[any](t, owner, "create_stream", hook("s-fast"))
	servertest.Call[any](t, ownerSDK, "create_stream", hook("s-sdk"))
	servertest.CallErr(t, ownerSDK, "get_role", map[string]any{"id": "r-none"})
	form := url.Values{"title": {"Clerk"}, "content": {"Keep the books."}, "next": {"/ui/roles/{id}"}, "csrf": {csrf}}
	if status, _, body := send(t, web, http.MethodPost, hd.URL+"/ui/act/create_role", "application/x-www-form-urlencoded", form.Encode(),
		http.Header{"Origin": {hd.URL}}); status != http.StatusSeeOther {
		t.Fatalf("create_role from the web UI: %d %.300s", status, body)
	}
	held, err := maya.CallTool(t.Context(), &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": "s-news", "body": "may I?"}})
	if err != nil || !strings.Contains(servertest.Text(held), "pending approval") {
		t.Fatalf("maya's publish: %v %v, want it held", servertest.Text(held), err)
	}
	servertest.CallErr(t, maya, "list_roles", nil)
	if err := st.FlushCalls(t.Context()); err != nil {
		t.Fatal(err)
	}

	calls, err := st.ListCalls(t.Context(), store.CallFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range calls {
		if c.Seq <= before[0].Seq {
			break
		}
		var args bytes.Buffer
		json.Compact(&args, c.Arguments)
		got = append([]string{c.Worker + " " + c.Tool + " " + string(c.Status) + " " + args.String()}, got...)
		if strings.Contains(c.Error+string(c.Arguments), secret) {
			t.Errorf("the secret is in the audit: %+v", c)
		}
		if c.Status == domain.CallPending && !strings.HasPrefix(c.Approval, "ap-") {
			t.Errorf("the held call names no approval: %+v", c)
		}
	}
	redacted := `"transport":{"config":{"secret":"[redacted]"},"kind":"webhook"}}`
	want := []string{
		`w-owner create_stream ok {"id":"s-fast","name":"s-fast",` + redacted,
		`w-owner create_stream ok {"id":"s-sdk","name":"s-sdk",` + redacted,
		`w-owner get_role error {"id":"r-none"}`,
		`w-owner create_role ok {"content":"Keep the books.","title":"Clerk"}`,
		`w-maya publish pending approval {"body":"may I?","stream":"s-news"}`,
		`w-maya list_roles refused {}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audited calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, _, shown := send(t, web, http.MethodGet, hd.URL+"/ui/calls?worker=w-maya", "", "", nil)
	for _, w := range []string{"publish", "pending approval", "list_roles", "refused", "missing grant"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the Calls page filtered by w-maya lacks %q:\n%.2000s", w, shown)
		}
	}
	if strings.Contains(shown, "create_stream") {
		t.Errorf("the Calls page filtered by w-maya shows the owner's calls")
	}
}
