package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/server"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/tools"
)

// confClient is what the conformance scenarios need of an MCP client; the
// go-sdk and mcp-go each implement it, so both are held to the same
// scenarios.
type confClient interface {
	version() string
	listTools(ctx context.Context) ([]string, error)
	// call returns the tool result's text, whether it is a tool error, its
	// structured content and any resource link's URI.
	call(ctx context.Context, name string, args map[string]any) (callResult, error)
	readResource(ctx context.Context, uri string) (string, error)
	ping(ctx context.Context) error
}

type callResult struct {
	text       string
	isError    bool
	structured json.RawMessage
	link       string
}

// TestConformance drives a worker endpoint with the go-sdk and the mcp-go
// clients at 2025-11-25 (initialize handshake) and 2026-07-28 (stateless,
// server/discover), checking every message on the wire strictly against
// that version's types.
func TestConformance(t *testing.T) {
	clients := []struct {
		name string
		dial func(t *testing.T, url, token, version string, w *wire) confClient
	}{
		{"go-sdk", dialGoSDK},
		{"mcp-go", dialMCPGoConf},
	}
	for _, c := range clients {
		for _, version := range []string{v20251125, v20260728} {
			t.Run(c.name+"/"+version, func(t *testing.T) {
				h := servertest.Start(t, server.Config{})
				w := &wire{}
				cl := c.dial(t, h.URL(store.OwnerWorker), h.OwnerToken, version, w)
				if cl.version() != version {
					t.Fatalf("negotiated %s, want %s", cl.version(), version)
				}
				conformanceScenarios(t, cl)
				methods := w.verify(t, version)
				first := map[string]string{v20251125: "initialize", v20260728: "server/discover"}[version]
				for _, m := range []string{first, "tools/list", "tools/call", "resources/read"} {
					if !slices.Contains(methods, m) {
						t.Errorf("the wire holds no %s (methods: %v)", m, methods)
					}
				}
			})
		}
	}
}

func conformanceScenarios(t *testing.T, cl confClient) {
	ctx := t.Context()
	t.Run("tools/list", func(t *testing.T) {
		names, err := cl.listTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The owner holds more than the context budget shows.
		if !slices.Contains(names, "find_tools") || !slices.Contains(names, "read_events") || len(names) >= len(tools.Names()) || !slices.IsSorted(names) {
			t.Errorf("tools/list = %v, want find_tools and the compact core in name order", names)
		}
	})
	t.Run("tools/call", func(t *testing.T) {
		res, err := cl.call(ctx, "get_worker", nil)
		if err != nil || res.isError {
			t.Fatalf("get_worker: %v %s", err, res.text)
		}
		var out struct{ Worker struct{ ID string } }
		if err := json.Unmarshal(res.structured, &out); err != nil || out.Worker.ID != store.OwnerWorker {
			t.Errorf("structured content %s (%v), want the owner", res.structured, err)
		}
		if !json.Valid([]byte(res.text)) {
			t.Errorf("text %q is not the result's JSON", res.text)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		res, err := cl.call(ctx, "no_such_tool", nil)
		if err == nil && !res.isError {
			t.Fatalf("calling no_such_tool succeeded: %+v", res)
		}
		if msg := fmt.Sprint(err) + res.text; !strings.Contains(msg, "no_such_tool") {
			t.Errorf("error %q does not name the tool", msg)
		}
	})
	badArgs := []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"wrong type", "create_role", map[string]any{"title": 5, "content": "x"}, []string{"title"}},
		{"missing field", "create_role", map[string]any{"title": "x"}, []string{"content"}},
		{"unknown field", "get_worker", map[string]any{"bogus": 1}, []string{"bogus"}},
		{"bad enum", "hire_worker", map[string]any{"position": "p-x", "kind": "robot", "name": "R"}, []string{"kind", "human", "ai"}},
	}
	for _, b := range badArgs {
		t.Run("bad arguments/"+b.name, func(t *testing.T) {
			res, err := cl.call(ctx, b.tool, b.args)
			if err != nil || !res.isError {
				t.Fatalf("%s(%v) = %v, %+v; want a tool error", b.tool, b.args, err, res)
			}
			for _, w := range b.want {
				if !strings.Contains(res.text, w) {
					t.Errorf("tool error %q does not name %q", res.text, w)
				}
			}
		})
	}
	t.Run("large result as a resource link", func(t *testing.T) {
		big := strings.Repeat("x", tools.InlineLimit+1)
		res, err := cl.call(ctx, "create_role", map[string]any{"title": "Big", "content": big})
		if err != nil || res.isError || res.link == "" {
			t.Fatalf("create_role = %v, %+v; want a resource link", err, res)
		}
		text, err := cl.readResource(ctx, res.link)
		if err != nil || !strings.Contains(text, big) {
			t.Errorf("resources/read %s: %v (%d bytes)", res.link, err, len(text))
		}
		if _, err := cl.readResource(ctx, "helix-org://results/res-nope"); err == nil {
			t.Error("reading an unknown result succeeded")
		}
	})
	if cl.version() == v20251125 { // 2026-07-28 removed ping
		t.Run("ping", func(t *testing.T) {
			if err := cl.ping(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// goSDKClient is the go-sdk client.
type goSDKClient struct{ cs *mcp.ClientSession }

func dialGoSDK(t *testing.T, url, token, version string, w *wire) confClient {
	client := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: token, Base: w}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return goSDKClient{cs}
}

func (c goSDKClient) version() string { return c.cs.InitializeResult().ProtocolVersion }

func (c goSDKClient) listTools(ctx context.Context) ([]string, error) {
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, nil
}

func (c goSDKClient) call(ctx context.Context, name string, args map[string]any) (callResult, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return callResult{}, err
	}
	out := callResult{isError: res.IsError}
	for _, ct := range res.Content {
		switch ct := ct.(type) {
		case *mcp.TextContent:
			out.text += ct.Text
		case *mcp.ResourceLink:
			out.link = ct.URI
		}
	}
	if res.StructuredContent != nil {
		out.structured, err = json.Marshal(res.StructuredContent)
	}
	return out, err
}

func (c goSDKClient) readResource(ctx context.Context, uri string) (string, error) {
	res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return res.Contents[0].Text, nil
}

func (c goSDKClient) ping(ctx context.Context) error { return c.cs.Ping(ctx, nil) }

// mcpGoClient is mark3labs/mcp-go, written independently of the go-sdk.
type mcpGoClient struct {
	c   *mcpgo.Client
	ver string
}

func dialMCPGoConf(t *testing.T, url, token, version string, w *wire) confClient {
	tr, err := mcpgotransport.NewStreamableHTTP(url, mcpgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		mcpgotransport.WithHTTPBasicClient(&http.Client{Transport: w}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpgo.NewClient(tr, mcpgo.WithProtocolVersion(version))
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	res, err := c.Initialize(t.Context(), mcpgomcp.InitializeRequest{Params: mcpgomcp.InitializeParams{
		ProtocolVersion: version, ClientInfo: mcpgomcp.Implementation{Name: "conformance", Version: "1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return mcpGoClient{c, res.ProtocolVersion}
}

func (c mcpGoClient) version() string { return c.ver }

func (c mcpGoClient) listTools(ctx context.Context) ([]string, error) {
	res, err := c.c.ListTools(ctx, mcpgomcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, nil
}

func (c mcpGoClient) call(ctx context.Context, name string, args map[string]any) (callResult, error) {
	res, err := c.c.CallTool(ctx, mcpgomcp.CallToolRequest{Params: mcpgomcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return callResult{}, err
	}
	out := callResult{isError: res.IsError, structured: res.RawStructuredContent}
	for _, ct := range res.Content {
		if tc, ok := mcpgomcp.AsTextContent(ct); ok {
			out.text += tc.Text
		}
		if rl, ok := ct.(mcpgomcp.ResourceLink); ok {
			out.link = rl.URI
		}
	}
	if out.structured == nil && res.StructuredContent != nil {
		out.structured, err = json.Marshal(res.StructuredContent)
	}
	return out, err
}

func (c mcpGoClient) readResource(ctx context.Context, uri string) (string, error) {
	res, err := c.c.ReadResource(ctx, mcpgomcp.ReadResourceRequest{Params: mcpgomcp.ReadResourceParams{URI: uri}})
	if err != nil {
		return "", err
	}
	tc, ok := mcpgomcp.AsTextResourceContents(res.Contents[0])
	if !ok {
		return "", fmt.Errorf("contents %T are not text", res.Contents[0])
	}
	return tc.Text, nil
}

// ping is deprecated in mcp-go because 2026-07-28 removed it; the suite
// pings only at 2025-11-25, where it is part of the protocol.
func (c mcpGoClient) ping(ctx context.Context) error {
	//lint:ignore SA1019 pinged only at 2025-11-25
	return c.c.Ping(ctx)
}
