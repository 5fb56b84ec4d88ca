package gatewaytest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// GitHubMCPVersion is the newest github-mcp-server the Go module proxy
// serves that builds here (v0.24.0 and later are refused by the proxy).
const GitHubMCPVersion = "v0.23.0"

// GitHubMCPServer builds github.com/github/github-mcp-server at
// GitHubMCPVersion from the module proxy, once per machine: the binary is
// kept in the user's cache directory. Test binaries of several packages
// may ask at once on a fresh machine: one builds, under a lock, and the
// others wait for it and take its binary.
func GitHubMCPServer(t testing.TB) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "helix-org-test")
	out := filepath.Join(dir, "github-mcp-server-"+GitHubMCPVersion)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(out+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close() // closing it releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock %s: %v", lock.Name(), err)
	}
	if _, err := os.Stat(out); err == nil {
		return out // built while this one waited
	}
	// The checksum database has no entry for the module (the proxy
	// answers 404), so it is fetched unchecked; its own go.sum pins the
	// rest.
	env := append(os.Environ(), "GONOSUMDB=github.com/github/github-mcp-server", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	dl := exec.Command(goTool(), "mod", "download", "-json", "github.com/github/github-mcp-server@"+GitHubMCPVersion)
	dl.Env, dl.Dir = env, t.TempDir()
	b, err := dl.Output()
	if err != nil {
		t.Fatalf("go mod download github-mcp-server: %v\n%s", err, b)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(b, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download github-mcp-server: no directory in %s", b)
	}
	// Built under a name of its own beside the final one and renamed,
	// so a binary at out is always whole, even after a build killed
	// halfway.
	tmp, err := os.CreateTemp(dir, filepath.Base(out)+".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	build := exec.Command(goTool(), "build", "-trimpath", "-o", tmp.Name(), "./cmd/github-mcp-server")
	build.Env, build.Dir = env, mod.Dir
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build github-mcp-server %s: %v\n%s", GitHubMCPVersion, err, b)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// GitHub is a fake GitHub API: it mints installation tokens for one App
// installation, checking the App's JWT against its public key, and
// serves one issue to requests carrying such a token. It also answers as
// the HTTP proxy of a GitHub Enterprise host (GHESHost): github-mcp-server
// drops the port of its --gh-host, so it reaches the fake through
// HTTP_PROXY instead.
type GitHub struct {
	*httptest.Server
	key          *rsa.PublicKey
	appID        string
	installation string
	issue        []byte
	mu           sync.Mutex
	minted       []string
	seen         []string
}

// GHESHost is the --gh-host github-mcp-server is given; its requests go to
// the fake through HTTP_PROXY.
const GHESHost = "http://ghes.test"

// StartGitHub serves the fake. issue is the JSON the issue endpoint
// answers (GET /repos/{o}/{r}/issues/{n}, any o, r, n).
func StartGitHub(t testing.TB, key *rsa.PublicKey, appID, installation string, issue []byte) *GitHub {
	t.Helper()
	g := &GitHub{key: key, appID: appID, installation: installation, issue: issue}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// Proxy is the HTTP_PROXY that leads GHESHost here.
func (g *GitHub) Proxy() string { return g.Server.URL }

// Minted are the installation tokens issued.
func (g *GitHub) Minted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.minted...)
}

// Seen are the Authorization headers of the API requests (not minting).
func (g *GitHub) Seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.seen...)
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	switch {
	case r.Method == http.MethodPost && path == "/app/installations/"+g.installation+"/access_tokens":
		g.mint(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/repos/") && strings.Contains(path, "/issues/"):
		g.mu.Lock()
		g.seen = append(g.seen, r.Header.Get("Authorization"))
		g.mu.Unlock()
		if !g.validToken(r.Header.Get("Authorization")) {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(g.issue)
	default:
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

func (g *GitHub) validToken(auth string) bool {
	_, tok, ok := strings.Cut(auth, " ")
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.minted {
		if ok && tok == m {
			return true
		}
	}
	return false
}

func (g *GitHub) mint(w http.ResponseWriter, r *http.Request) {
	jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, `{"message":"A JSON web token could not be decoded"}`, http.StatusUnauthorized)
		return
	}
	if err := g.checkJWT(jwt); err != nil {
		http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusUnauthorized)
		return
	}
	g.mu.Lock()
	tok := fmt.Sprintf("ghs_installation%02d", len(g.minted)+1)
	g.minted = append(g.minted, tok)
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"token": tok, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
}

// checkJWT verifies an RS256 JWT as GitHub does: the App's signature, its
// id as issuer, and a lifetime of at most ten minutes around now.
func (g *GitHub) checkJWT(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(g.key, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	var head struct{ Alg string }
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(b, &head) != nil || head.Alg != "RS256" {
		return fmt.Errorf("header is not RS256")
	}
	var claims struct {
		Iss      string
		Iat, Exp int64
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(b, &claims) != nil {
		return fmt.Errorf("claims")
	}
	now := time.Now().Unix()
	if claims.Iss != g.appID || claims.Iat > now+60 || claims.Exp < now || claims.Exp-claims.Iat > 600 {
		return fmt.Errorf("claims %+v are not of app %s now", claims, g.appID)
	}
	return nil
}

// GitHubApp is a fake GitHub Enterprise with one GitHub App (id 1234,
// installation 42) that serves octokit's opened-issue payload, and the
// App's private key, PEM-encoded, as an operator would paste it.
type GitHubApp struct {
	*GitHub
	PrivateKey string
}

// StartGitHubApp starts a GitHubApp for a test.
func StartGitHubApp(t testing.TB) GitHubApp {
	t.Helper()
	payload, err := os.ReadFile(filepath.Join(realworld(), "github/payload-examples/api.github.com/issues/opened.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var event struct{ Issue json.RawMessage }
	if err := json.Unmarshal(payload, &event); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return GitHubApp{GitHub: StartGitHub(t, &key.PublicKey, "1234", "42", event.Issue), PrivateKey: pemKey}
}

// realworld is the directory of real payloads nobody here wrote
// (HELIX_ORG_REALWORLD, else the workplace's shared copy).
func realworld() string {
	if d := os.Getenv("HELIX_ORG_REALWORLD"); d != "" {
		return d
	}
	return "/work/shared/realworld"
}
