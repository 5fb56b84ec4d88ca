package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/store"
)

// clientFlags say how `call` and `tools` reach a worker's MCP endpoint.
type clientFlags struct {
	dbFlags
	URL     string
	Worker  string
	Token   string
	Timeout time.Duration
}

func (f *clientFlags) bind(cmd *cobra.Command) {
	f.dbFlags.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.URL, "url", envOr("HELIX_ORG_URL", "http://127.0.0.1:8080"), "the server's base URL (env HELIX_ORG_URL)")
	cmd.Flags().StringVar(&f.Worker, "worker", store.OwnerWorker, "act as this worker, through its endpoint and grants")
	cmd.Flags().StringVar(&f.Token, "token", "", "the worker's bearer token (env "+domain.TokenEnv+"); without one, a token is minted from the database for a server on loopback, "+
		"expiring at --timeout, and revoked after (or on SIGINT/SIGTERM)")
	cmd.Flags().DurationVar(&f.Timeout, "timeout", server.DefaultCallTimeout, "longest the command may take (a skill build can take minutes); a token it mints expires then")
	cmd.RegisterFlagCompletionFunc("worker", f.complete(workerNames))
}

// connect opens an MCP session as the worker, under a context that ends
// at --timeout. close ends both and revokes the token it minted, if it
// minted one.
func (f *clientFlags) connect(parent context.Context) (ctx context.Context, cs *mcp.ClientSession, close func(), err error) {
	if f.Timeout <= 0 {
		return nil, nil, nil, fmt.Errorf("--timeout %s: give a positive duration, e.g. 15m", f.Timeout)
	}
	if err := checkBaseURL(f.URL); err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(parent, f.Timeout)
	tok, revoke, err := f.token(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	url := domain.MCPURL(orgURL(parent, f.URL), f.Worker)
	client := mcp.NewClient(&mcp.Implementation{Name: "helix-org-cli", Version: version}, nil)
	cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token: tok}}}, nil)
	if err != nil {
		revoke()
		cancel()
		return nil, nil, nil, f.connectError(url, err)
	}
	return ctx, cs, func() { cs.Close(); revoke(); cancel() }, nil
}

// token is the bearer to use: --token, $HELIX_ORG_TOKEN, or one minted now.
func (f *clientFlags) token(ctx context.Context) (tok string, revoke func(), err error) {
	if tok = f.Token; tok == "" {
		tok = os.Getenv(domain.TokenEnv)
	}
	if tok != "" {
		return tok, func() {}, nil
	}
	if !loopbackURL(f.URL) {
		return "", nil, fmt.Errorf("--url %s is not this machine: a token is minted only for a server on loopback (127.0.0.1, ::1, localhost); "+
			"give --token (or %s) to call another server", f.URL, domain.TokenEnv)
	}
	st, err := f.open(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("no --token or %s given, and none can be minted: %w", domain.TokenEnv, err)
	}
	w, err := st.GetWorker(ctx, f.Worker)
	if err == nil && !w.Active() {
		err = fmt.Errorf("worker %s has been dismissed", w.ID)
	}
	if err == nil {
		tok, err = st.CreateToken(ctx, store.TokenSpec{WorkerID: f.Worker, Kind: store.TokenOperator, TTL: f.Timeout, Label: "call"})
	}
	if err != nil {
		st.Close()
		return "", nil, err
	}
	var once sync.Once
	revokeOnce := func() {
		once.Do(func() {
			st.RevokeToken(context.WithoutCancel(ctx), tok)
			st.Close()
		})
	}
	// A signal (main's context) or the timeout ends ctx: the token is
	// revoked at once, whatever the command is waiting for. Killed outright,
	// it lapses at the timeout.
	stop := context.AfterFunc(ctx, revokeOnce)
	return tok, func() { stop(); revokeOnce() }, nil
}

// loopbackURL reports whether a base URL names this machine over
// loopback, where a minted token cannot be sent anywhere else.
func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// connectError says what went wrong in the operator's terms.
func (f *clientFlags) connectError(url string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing answers at %s: is the server running (helix-org serve)? Point --url (or HELIX_ORG_URL) at it", f.URL)
	// By the status's text, not its code: a port such as :40123 in an
	// error's URL holds a code.
	case strings.Contains(msg, "Unauthorized"):
		return fmt.Errorf("%s refused the token: unknown, expired or revoked (helix-org token list)", url)
	case strings.Contains(msg, "Forbidden"):
		return fmt.Errorf("%s refused the token: it is not %s's (pass --worker), or %s has been dismissed", url, f.Worker, f.Worker)
	case strings.HasSuffix(msg, ": Gone") || strings.Contains(msg, "410 Gone"):
		// Only an archived org answers 410 (server.Orgs).
		name := "<name>"
		if _, rest, ok := strings.Cut(url, "/orgs/"); ok {
			name, _, _ = strings.Cut(rest, "/")
		}
		return fmt.Errorf("%s answers 410 Gone: org %s is archived (helix-org orgs list says since when); helix-org orgs restore %s serves it again", url, name, name)
	}
	return fmt.Errorf("connect to %s: %w", url, err)
}

// bearer adds the token to every request, and turns tool search off: the
// CLI lists and calls every tool a worker holds, and no model pays for
// the list.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	r.Header.Set(domain.ToolSearchHeader, "off")
	return http.DefaultTransport.RoundTrip(r)
}

// toolsOf lists the tools the session's worker may call.
func toolsOf(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}
