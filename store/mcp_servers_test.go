package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

const mcpToken = "ghs_outside-server-token-1234567890"

// TestMCPServerCredentialEncryptedAtRest: the credential is nowhere in the
// database file nor the audit trail, and only MCPServerAuth reads it back.
func TestMCPServerCredentialEncryptedAtRest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "org.db")
	st := openAt(t, path, "")
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	srv := domain.MCPServer{Name: "tracker", Transport: domain.MCPHTTP, URL: "https://mcp.example.com/mcp"}
	added, err := st.AddMCPServer(ctx, "w-owner", srv, &domain.MCPAuth{Type: domain.AuthBearer, Token: mcpToken})
	if err != nil {
		t.Fatal(err)
	}
	if added.AuthType != domain.AuthBearer {
		t.Errorf("authType = %q, want bearer", added.AuthType)
	}
	auth, err := st.MCPServerAuth(ctx, "tracker")
	if err != nil || auth == nil || auth.Token != mcpToken {
		t.Fatalf("MCPServerAuth = %+v, %v; want the token back", auth, err)
	}
	listed, err := st.ListMCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(listed)
	if bytes.Contains(b, []byte(mcpToken)) {
		t.Errorf("ListMCPServers shows the token: %s", b)
	}
	st.Close()
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(mcpToken)) {
			t.Errorf("%s holds the token in plain text", filepath.Base(f))
		}
	}
}

func TestAddMCPServerRefusesBadInput(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ok := domain.MCPServer{Name: "ok", Transport: domain.MCPHTTP, URL: "http://127.0.0.1:1/mcp"}
	if _, err := st.AddMCPServer(ctx, "w-owner", ok, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		srv   domain.MCPServer
		auth  *domain.MCPAuth
		field string
		err   error
	}{
		{"double underscore", domain.MCPServer{Name: "a__b", Transport: domain.MCPHTTP, URL: "http://x/"}, nil, "name", domain.ErrInvalid},
		{"upper case", domain.MCPServer{Name: "GitHub", Transport: domain.MCPHTTP, URL: "http://x/"}, nil, "name", domain.ErrInvalid},
		{"no url", domain.MCPServer{Name: "x", Transport: domain.MCPHTTP}, nil, "url", domain.ErrInvalid},
		{"ftp url", domain.MCPServer{Name: "x", Transport: domain.MCPHTTP, URL: "ftp://x/"}, nil, "url", domain.ErrInvalid},
		{"no command", domain.MCPServer{Name: "x", Transport: domain.MCPStdio}, nil, "command", domain.ErrInvalid},
		{"bad transport", domain.MCPServer{Name: "x", Transport: "sse", URL: "http://x/"}, nil, "transport", domain.ErrInvalid},
		{"bad auth type", domain.MCPServer{Name: "x", Transport: domain.MCPHTTP, URL: "http://x/"}, &domain.MCPAuth{Type: "basic"}, "auth.type", domain.ErrInvalid},
		{"bearer without token", domain.MCPServer{Name: "x", Transport: domain.MCPHTTP, URL: "http://x/"}, &domain.MCPAuth{Type: "bearer"}, "auth.token", domain.ErrInvalid},
		{"app without key", domain.MCPServer{Name: "x", Transport: domain.MCPHTTP, URL: "http://x/"},
			&domain.MCPAuth{Type: "github_app", AppID: "1", InstallationID: "2"}, "auth.private_key", domain.ErrInvalid},
		{"same name", ok, nil, "", domain.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := st.AddMCPServer(ctx, "w-owner", tc.srv, tc.auth)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var fe *domain.FieldError
			if tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
				t.Errorf("err = %v, want it to name field %s", err, tc.field)
			}
		})
	}
}

// TestOutsideToolsFollowTheirServer: the owner holds every tool of a
// server's list and no other; a request's bearer sees the list at once,
// and a removed server takes its tools and their grants with it.
func TestOutsideToolsFollowTheirServer(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	if _, err := st.Bootstrap(ctx, nil); err != nil {
		t.Fatal(err)
	}
	tok, err := st.CreateToken(ctx, store.TokenSpec{WorkerID: "w-owner", Kind: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMCPServer(ctx, "w-owner", domain.MCPServer{Name: "gh", Transport: domain.MCPStdio, Command: "/bin/true", Trusted: true}, nil); err != nil {
		t.Fatal(err)
	}
	outside := func() []string {
		b, err := st.Authenticate(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range b.Outside {
			if !o.Trusted {
				t.Errorf("%s lost its server's trust", o.ToolName())
			}
			names = append(names, o.ToolName())
		}
		for _, g := range b.Tools {
			if domain.IsOutsideTool(g) && !slices.Contains(names, g) {
				t.Errorf("owner holds %s, which no server offers", g)
			}
		}
		for _, n := range names {
			if !slices.Contains(b.Tools, n) {
				t.Errorf("owner does not hold %s", n)
			}
		}
		return names
	}
	if got := outside(); len(got) != 0 {
		t.Fatalf("before any fetch: %v", got)
	}
	tool := func(n string) domain.OutsideTool {
		return domain.OutsideTool{Name: n, Description: n, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	steps := []struct {
		tools []domain.OutsideTool
		want  []string
	}{
		{[]domain.OutsideTool{tool("get_issue"), tool("list_issues")}, []string{"gh__get_issue", "gh__list_issues"}},
		{[]domain.OutsideTool{tool("get_issue"), tool("create_issue")}, []string{"gh__create_issue", "gh__get_issue"}},
	}
	for _, s := range steps {
		if err := st.SetMCPTools(ctx, "gh", s.tools); err != nil {
			t.Fatal(err)
		}
		got := outside()
		slices.Sort(got)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("outside tools (-want +got):\n%s", diff)
		}
	}
	srv, err := st.GetMCPServer(ctx, "gh")
	if err != nil || !srv.Healthy || srv.RefreshedAt == nil {
		t.Errorf("after a fetch: %+v, %v; want healthy and refreshed", srv, err)
	}
	if err := st.RemoveMCPServer(ctx, "w-owner", "gh"); err != nil {
		t.Fatal(err)
	}
	if got := outside(); len(got) != 0 {
		t.Errorf("after removal: %v", got)
	}
	if _, err := st.GetMCPServer(ctx, "gh"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("GetMCPServer after removal: %v, want not found", err)
	}
}
