package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

const (
	// InlineLimit is the largest result text sent inside a tools/call
	// answer; a larger one is kept and linked, so a model reads it only
	// when it chooses to.
	InlineLimit = 16 << 10
	// ResultTTL is how long a linked result stays readable.
	ResultTTL = 24 * time.Hour
	// resultScheme prefixes the URI of a kept result.
	resultScheme = "helix-org://results/"
)

// linkLarge replaces res's text with a resource link when the text is
// over InlineLimit. The structured content stays, as the output schema
// promises it; a client that shows a model the content shows the link.
func linkLarge(ctx context.Context, env *Env, tool string, res *mcp.CallToolResult, text []byte) error {
	if len(text) <= InlineLimit {
		return nil
	}
	kept, err := env.Store.PutResult(ctx, env.Caller, tool, "application/json", text, ResultTTL)
	if err != nil {
		return err
	}
	size := int64(len(text))
	uri := resultScheme + kept.ID
	res.Content = []mcp.Content{
		&mcp.TextContent{Text: fmt.Sprintf("The result of %s is %d bytes, over the %d sent inline; read it with resources/read %s (kept until %s).",
			tool, size, InlineLimit, uri, kept.ExpiresAt.Format(time.RFC3339))},
		&mcp.ResourceLink{URI: uri, Name: kept.ID, Title: tool + " result", MIMEType: kept.MIMEType, Size: &size},
	}
	return nil
}

// addResults lets the worker read the results kept for it, and no other.
func addResults(srv *mcp.Server, env *Env) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: resultScheme + "{id}", Name: "result",
		Description: "A tool result too large to send inline.", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			kept, err := env.Store.GetResult(ctx, env.Caller, strings.TrimPrefix(uri, resultScheme))
			if errors.Is(err, domain.ErrNotFound) {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: kept.MIMEType, Text: string(kept.Content)}}}, nil
		})
}
