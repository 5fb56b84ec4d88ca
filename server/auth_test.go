package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	createRoleBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_role","arguments":{"id":"r-intruder","title":"Intruder","content":"x"}}}`
)

// rawRequest is one MCP POST as a browser, a script or an attacker would
// send it, without any client library smoothing things over.
type rawRequest struct {
	path   string // e.g. /workers/w-owner/mcp?token=…
	auth   string // Authorization header, if any
	origin string
	host   string // overrides the Host header
	body   string
}

func (r rawRequest) do(t *testing.T, base string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	if r.origin != "" {
		req.Header.Set("Origin", r.origin)
	}
	if r.host != "" {
		req.Host = r.host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", r.path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// orgSize is what a refused request must leave untouched.
type orgSize struct {
	LastSeq                                         int64
	Roles, Positions, Workers, Streams, OwnerGrants int
}

func sizeOf(t *testing.T, st *store.Store) orgSize {
	t.Helper()
	ctx := t.Context()
	var s orgSize
	var err error
	if s.LastSeq, err = st.LastSeq(ctx); err != nil {
		t.Fatal(err)
	}
	roles, err := st.ListRoles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	positions, err := st.ListPositions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	workers, err := st.ListWorkers(ctx, store.WorkerFilter{IncludeDismissed: true})
	if err != nil {
		t.Fatal(err)
	}
	streams, err := st.ListStreams(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	grants, err := st.ListGrants(ctx, store.OwnerWorker)
	if err != nil {
		t.Fatal(err)
	}
	s.Roles, s.Positions, s.Workers, s.Streams, s.OwnerGrants = len(roles), len(positions), len(workers), len(streams), len(grants)
	return s
}

func TestAuth(t *testing.T) {
	logs := &servertest.Logs{}
	h := servertest.Start(t, server.Config{Logger: logs.Logger()})
	owner := h.Owner(t)
	role := servertest.Call[domain.Role](t, owner, "create_role", map[string]any{"title": "Staff", "content": "Work."})
	pos := servertest.Call[domain.Position](t, owner, "create_position", map[string]any{"role": role.ID, "title": "Staff 1"})
	maya := servertest.Call[domain.Worker](t, owner, "hire_worker", map[string]any{"position": pos.ID, "kind": "human", "name": "Maya"})
	mayaToken := servertest.Token(t, h.Store, maya.ID)

	// A dismissed worker's token must stop working, so first show it worked.
	gone := servertest.Call[domain.Worker](t, owner, "hire_worker", map[string]any{"position": pos.ID, "kind": "human", "name": "Gone"})
	goneToken := servertest.Token(t, h.Store, gone.ID)
	goneInit := rawRequest{path: "/workers/" + gone.ID + "/mcp", auth: "Bearer " + goneToken, body: initializeBody}
	if resp, body := goneInit.do(t, h.Server.URL); resp.StatusCode != http.StatusOK {
		t.Fatalf("before dismissal: status %d, want 200: %s", resp.StatusCode, body)
	}
	servertest.Call[domain.Worker](t, owner, "dismiss_worker", map[string]any{"id": gone.ID})

	ownerPath := "/workers/" + store.OwnerWorker + "/mcp"
	ownerAuth := "Bearer " + h.OwnerToken
	unknown := store.TokenPrefix + strings.Repeat("A", 43)
	tests := []struct {
		name       string
		req        rawRequest
		wantStatus int
		wantBody   string
	}{
		{"no authorization", rawRequest{path: ownerPath, body: initializeBody}, 401, "missing bearer token"},
		{"no authorization, tool call", rawRequest{path: ownerPath, body: createRoleBody}, 401, "missing bearer token"},
		{"basic scheme", rawRequest{path: ownerPath, auth: "Basic dzpvd25lcg==", body: initializeBody}, 401, "missing bearer token"},
		{"empty bearer", rawRequest{path: ownerPath, auth: "Bearer ", body: initializeBody}, 401, "missing bearer token"},
		{"malformed token", rawRequest{path: ownerPath, auth: "Bearer not-a-token", body: initializeBody}, 401, "invalid or expired token"},
		{"unknown token", rawRequest{path: ownerPath, auth: "Bearer " + unknown, body: createRoleBody}, 401, "invalid or expired token"},
		{"token with one character changed", rawRequest{path: ownerPath, auth: "Bearer " + flipped(h.OwnerToken), body: createRoleBody}, 401, "invalid or expired token"},
		{"token in ?token= only", rawRequest{path: ownerPath + "?token=" + h.OwnerToken, body: createRoleBody}, 401, "missing bearer token"},
		{"token in ?access_token= only", rawRequest{path: ownerPath + "?access_token=" + h.OwnerToken, body: createRoleBody}, 401, "missing bearer token"},
		{"another worker's token", rawRequest{path: ownerPath, auth: "Bearer " + mayaToken, body: initializeBody}, 403, "belongs to another worker"},
		{"another worker's token, tool call", rawRequest{path: ownerPath, auth: "Bearer " + mayaToken, body: createRoleBody}, 403, "belongs to another worker"},
		{"dismissed worker's token", goneInit, 403, "has been dismissed"},
		{"dismissed worker's token, tool call", rawRequest{path: goneInit.path, auth: goneInit.auth, body: createRoleBody}, 403, "has been dismissed"},
		{"cross-origin", rawRequest{path: ownerPath, auth: ownerAuth, origin: "https://evil.example", body: createRoleBody}, 403, "cross-origin request"},
		{"dns rebinding: foreign host on loopback", rawRequest{path: ownerPath, auth: ownerAuth, host: "evil.example", body: createRoleBody}, 403, "invalid Host header"},
		{"dns rebinding: foreign host with port", rawRequest{path: ownerPath, auth: ownerAuth, host: "evil.example:80", body: initializeBody}, 403, "invalid Host header"},
		{"own token on own endpoint", rawRequest{path: "/workers/" + maya.ID + "/mcp", auth: "Bearer " + mayaToken, body: initializeBody}, 200, `"serverInfo"`},
		{"owner token", rawRequest{path: ownerPath, auth: ownerAuth, body: initializeBody}, 200, `"serverInfo"`},
		{"scheme is case-insensitive", rawRequest{path: ownerPath, auth: "bearer " + h.OwnerToken, body: initializeBody}, 200, `"serverInfo"`},
	}

	before := sizeOf(t, h.Store)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := tt.req.do(t, h.Server.URL)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %q", resp.StatusCode, tt.wantStatus, body)
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("body = %q, want it to contain %q", body, tt.wantBody)
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if tt.wantStatus == http.StatusUnauthorized && !strings.HasPrefix(challenge, "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge on every 401", challenge)
			}
		})
	}
	if diff := cmp.Diff(before, sizeOf(t, h.Store)); diff != "" {
		t.Errorf("refused requests changed the store (-before +after):\n%s", diff)
	}

	// The same tool call with the right token does create the role, so the
	// refusals above were the auth at work and not a malformed request.
	ok := rawRequest{path: ownerPath, auth: ownerAuth, body: createRoleBody}
	if resp, body := ok.do(t, h.Server.URL); resp.StatusCode != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("control create_role: status %d: %s", resp.StatusCode, body)
	}
	if _, err := h.Store.GetRole(t.Context(), "r-intruder"); err != nil {
		t.Errorf("control create_role did not create the role: %v", err)
	}

	// Every refusal is one log line with its status and reason, and no
	// token, even one sent in the query string, reaches the log.
	h.Server.Close() // waits for the handlers, which log once they answer
	got := logs.String()
	for _, want := range []string{
		`level=WARN msg="request refused" component=server method=POST route="POST /workers/{id}/mcp" path=/workers/w-owner/mcp status=401 reason="unauthorized: missing bearer token" remote=127.0.0.1:`,
		`status=401 reason="unauthorized: invalid or expired token"`,
		`status=403 reason="forbidden: this token belongs to another worker"`,
		`path=/workers/` + gone.ID + `/mcp status=403 reason="forbidden: worker ` + gone.ID + ` has been dismissed"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	for _, secret := range []string{h.OwnerToken, mayaToken, goneToken, flipped(h.OwnerToken), unknown} {
		if strings.Contains(got, secret) {
			t.Errorf("a token reached the log:\n%s", got)
		}
	}
	if n := strings.Count(got, `msg="request refused"`); n != 16 {
		t.Errorf("%d refusals logged, want one per refused request (16):\n%s", n, got)
	}
}

// flipped changes one character in the middle of a token.
func flipped(tok string) string {
	b := []byte(tok)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestTokenFormat(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	seen := map[string]bool{h.OwnerToken: true}
	for range 20 {
		tok := servertest.Token(t, h.Store, store.OwnerWorker)
		rest, ok := strings.CutPrefix(tok, "hxo_")
		if !ok || len(rest) != 43 {
			t.Fatalf("token %q: want hxo_ and 43 base64url characters", tok)
		}
		raw, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			t.Fatalf("token %q is not base64url: %v", tok, err)
		}
		if bits := len(raw) * 8; bits < 128 {
			t.Fatalf("token %q carries %d bits, want at least 128", tok, bits)
		}
		if seen[tok] {
			t.Fatalf("token %q minted twice", tok)
		}
		seen[tok] = true
	}
}

// TestTokenNotStored reads every byte SQLite wrote — the database, its WAL
// and shared memory — and finds the token's hash but never the token.
func TestTokenNotStored(t *testing.T) {
	h := servertest.Start(t, server.Config{})
	tok := servertest.Token(t, h.Store, store.OwnerWorker)
	// Use the token once so any lookup path has run too.
	if resp, body := (rawRequest{path: "/workers/w-owner/mcp", auth: "Bearer " + tok, body: initializeBody}).do(t, h.Server.URL); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	secret := strings.TrimPrefix(tok, store.TokenPrefix)
	raw, _ := base64.RawURLEncoding.DecodeString(secret)
	sum := sha256.Sum256([]byte(tok))

	files, err := filepath.Glob(h.Store.Path() + "*")
	if err != nil {
		t.Fatal(err)
	}
	read := os.ReadFile
	if store.IsPostgres(h.Store.Path()) {
		// On PostgreSQL: every row of the database, as pg_dump writes it.
		files = []string{h.Store.Path()}
		read = func(url string) ([]byte, error) {
			return exec.CommandContext(t.Context(), "pg_dump", "--data-only", "--dbname="+url).Output()
		}
	}
	var all []byte
	for _, f := range files {
		b, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
		for _, leak := range []string{tok, secret, string(raw)} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("%s contains the plaintext token", filepath.Base(f))
			}
		}
	}
	// Positive control: the token row is somewhere in these bytes, so the
	// search above looked where tokens are kept.
	if !bytes.Contains(all, []byte(hex.EncodeToString(sum[:]))) {
		t.Errorf("the token's hash is in none of %v; the leak check looked in the wrong place", files)
	}
}
