package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
)

// maxToolResult bounds one tool result fed back to the model.
const maxToolResult = 64 << 10

// Toolbox is the tools the built-in agent offers its model: the worker's
// MCP tools, exactly as tools/list describes them, and optionally bash.
type Toolbox struct {
	session *mcp.ClientSession
	specs   []llm.Tool
	mcp     []string
	bash    *Bash
	// linked is set once a result linked to a resource; read_resource is
	// offered from then on.
	linked bool
}

// ConnectTools connects to a worker's MCP endpoint with its token and
// lists its tools. bash, when not nil, is offered as one more tool.
func ConnectTools(ctx context.Context, url, token string, bash *Bash) (*Toolbox, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "helix-org-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	tb := &Toolbox{session: cs, bash: bash}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("list tools: %w", err)
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("tool %s: input schema: %w", tool.Name, err)
		}
		desc := tool.Description
		if desc == "" {
			desc = tool.Title
		}
		tb.specs = append(tb.specs, llm.Tool{Name: tool.Name, Description: desc, Schema: schema})
		tb.mcp = append(tb.mcp, tool.Name)
	}
	if bash != nil {
		tb.specs = append(tb.specs, bash.Spec())
	}
	return tb, nil
}

// Close ends the MCP session.
func (t *Toolbox) Close() error { return t.session.Close() }

// Specs are the tools as offered to the model.
func (t *Toolbox) Specs() []llm.Tool { return t.specs }

// Names lists the tools by name.
func (t *Toolbox) Names() []string {
	var names []string
	for _, s := range t.specs {
		names = append(names, s.Name)
	}
	return names
}

// Call runs one tool call. Every failure — an unknown tool, arguments that
// are not an object, a tool error, a broken connection — becomes an error
// result the model reads, so it can correct itself.
func (t *Toolbox) Call(ctx context.Context, c llm.ToolCall) llm.ToolResult {
	text, isErr := t.call(ctx, c)
	if len(text) > maxToolResult {
		text = text[:maxToolResult] + "\n… (truncated)"
	}
	return llm.ToolResult{CallID: c.ID, Content: text, IsError: isErr}
}

func (t *Toolbox) call(ctx context.Context, c llm.ToolCall) (string, bool) {
	var args map[string]any
	if err := json.Unmarshal(c.Input, &args); err != nil || args == nil {
		return fmt.Sprintf("the arguments to %s are not a JSON object (%s); call it again with an object that matches its input schema", c.Name, c.Input), true
	}
	if t.bash != nil && c.Name == BashToolName {
		return t.bash.Run(ctx, args)
	}
	if t.linked && c.Name == ReadResourceToolName {
		return t.readResource(ctx, args)
	}
	// With find_tools the worker holds more tools than were listed: the
	// server says whether one exists.
	if !slices.Contains(t.mcp, c.Name) && !slices.Contains(t.mcp, FindToolsName) {
		if len(t.Names()) == 0 {
			return fmt.Sprintf("there is no tool %q; this worker holds no tools", c.Name), true
		}
		return fmt.Sprintf("there is no tool %q; the tools are: %s", c.Name, strings.Join(t.Names(), ", ")), true
	}
	res, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	t.noteLinks(res)
	if c.Name == FindToolsName && !res.IsError {
		t.addFound(res)
	}
	return resultText(res), res.IsError
}

// FindToolsName is the tool a worker with more tools than are listed
// finds the rest with (tools.FindTools).
const FindToolsName = "find_tools"

// addFound offers the model the tools find_tools returned, from its next
// turn on, as the tools listed at the start are offered.
func (t *Toolbox) addFound(res *mcp.CallToolResult) {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return
	}
	var found struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(b, &found) != nil {
		return
	}
	for _, f := range found.Tools {
		if f.Name == "" || slices.Contains(t.mcp, f.Name) {
			continue
		}
		t.specs = append(t.specs, llm.Tool{Name: f.Name, Description: f.Description, Schema: f.InputSchema})
		t.mcp = append(t.mcp, f.Name)
	}
}

// resultText flattens a tool result's content for the model, <, > and &
// as themselves.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
			continue
		}
		// The go-sdk's content marshals itself, escapes and all.
		b, _ := json.Marshal(c)
		parts = append(parts, domain.ReadableJSON(b))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, domain.ReadableJSON(b))
	}
	return strings.Join(parts, "\n")
}

// bearer adds the worker's token to every MCP request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
