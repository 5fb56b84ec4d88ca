package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

type toolsConfig struct {
	clientFlags
	Output string
}

func newToolsCmd() *cobra.Command {
	var cfg toolsConfig
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the MCP tools a worker may call, with their arguments (-o json: each input schema)",
		Long: `tools lists what a worker (--worker, default w-owner) may call on its MCP
endpoint, as tools/list answers it: each tool's arguments (* required) and
description; -o json or -o yaml gives every input schema whole. The token
is found as for helix-org call.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cs, closeSession, err := cfg.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer closeSession()
			ts, err := toolsOf(ctx, cs)
			if err != nil {
				return err
			}
			type tool struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				InputSchema any    `json:"inputSchema"`
			}
			out := make([]tool, len(ts))
			for i, t := range ts {
				out[i] = tool{t.Name, t.Description, t.InputSchema}
			}
			return emit(cmd.OutOrStdout(), cfg.Output, map[string]any{"tools": out}, func() error { return writeTools(cmd.OutOrStdout(), ts) })
		},
	}
	cfg.bind(cmd)
	bindData(cmd, &cfg.Output)
	return cmd
}

func writeTools(w io.Writer, ts []*mcp.Tool) error {
	return writeTable(w, ts, "No tools: this worker holds no grants (grant_tool gives some).", "TOOL\tARGUMENTS\tDESCRIPTION",
		func(t *mcp.Tool) string {
			return t.Name + "\t" + arguments(t.InputSchema) + "\t" + oneLine(clipRunes(firstSentence(t.Description), 90))
		})
}

// arguments lists a schema's properties, required ones first and marked *.
func arguments(schema any) string {
	props := schemaProperties(schema)
	var required []string
	if m, ok := schema.(map[string]any); ok {
		for _, r := range asSlice(m["required"]) {
			required = append(required, fmt.Sprint(r))
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(required, a), slices.Contains(required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, n := range names {
		if slices.Contains(required, n) {
			names[i] = n + "*"
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, " ")
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
