package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// hirePrompt is the owner's hiring playbook for one role. It reads the
// role's Streams and Tools sections itself, so the steps name concrete
// streams and exactly the tools to grant; a worker hired without its
// streams would never be woken.
func hirePrompt() prompt {
	return prompt{
		def: &mcp.Prompt{Name: "hire", Description: "Hire a worker into a Role, step by step: its streams, a position, the worker, its subscriptions and exactly the role's tools.",
			Arguments: []*mcp.PromptArgument{
				{Name: "role", Description: "the role's id, e.g. r-support-engineer", Required: true},
				{Name: "name", Description: "the worker's name; default the role's title"},
				{Name: "kind", Description: "ai (default) or human"},
			}},
		needs: []string{"list_streams", "create_stream", "create_position", "hire_worker", "subscribe", "grant_tool"},
		handler: func(env *Env, granted []string) mcp.PromptHandler {
			return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				args := req.Params.Arguments
				roleID := strings.TrimSpace(args["role"])
				if roleID == "" {
					return nil, fmt.Errorf("argument role is required: the id of the role to hire into (list_roles shows them)")
				}
				role, err := env.Store.GetRole(ctx, roleID)
				if err != nil {
					return nil, err
				}
				kind := domain.WorkerKind(strings.TrimSpace(args["kind"]))
				if kind == "" {
					kind = domain.WorkerAI
				}
				if kind != domain.WorkerAI && kind != domain.WorkerHuman {
					return nil, fmt.Errorf("argument kind %q: want ai or human", kind)
				}
				name := strings.TrimSpace(args["name"])
				if name == "" {
					name = role.Title
				}
				return textPrompt("Hire into "+role.Title, hireText(role, name, kind, env.Known, granted)), nil
			}
		},
	}
}

func hireText(role domain.Role, name string, kind domain.WorkerKind, known, granted []string) string {
	streams := sectionItems(role.Content, "streams", streamID())
	tools := sectionItems(role.Content, "tools", toolName())
	var b strings.Builder
	fmt.Fprintf(&b, "Hire %s (%s) into the role %s (%q), following the hiring playbook step by step. "+
		"A worker without its streams is half-hired: do not stop before the last step.\n\n", name, kind, role.ID, role.Title)
	if len(streams) > 0 {
		fmt.Fprintf(&b, "The role's Streams section names: %s.\n", strings.Join(streams, ", "))
	} else {
		b.WriteString("The role has no Streams section: ask me which streams the worker follows before step 5.\n")
	}
	var grant, unknown, notHeld []string
	for _, t := range tools {
		switch {
		case !slices.Contains(known, t):
			unknown = append(unknown, t)
		case !slices.Contains(granted, t):
			notHeld = append(notHeld, t)
		default:
			grant = append(grant, t)
		}
	}
	switch {
	case len(tools) == 0:
		b.WriteString("The role has no Tools section: grant nothing, and tell me so.\n")
	default:
		fmt.Fprintf(&b, "The role's Tools section names exactly: %s.\n", orNone(grant))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "Not helix-org tools, so leave them out and tell me: %s.\n", strings.Join(unknown, ", "))
	}
	if len(notHeld) > 0 {
		fmt.Fprintf(&b, "You do not hold these, so cannot grant them; tell me: %s.\n", strings.Join(notHeld, ", "))
	}
	fmt.Fprintf(&b, `
1. Call list_streams and note which of the role's streams exist.
2. For each one missing, call create_stream with that id, a short name and a description taken from the role.
3. Call create_position with role %s and title %q.
4. Call hire_worker into that position with kind %s, name %q and %s.
5. Call subscribe once per stream of the role, with worker set to the new worker's id.
6. Call get_worker for the new worker and check it follows every one of the role's streams and holds exactly those tools; fix what is missing with subscribe or grant_tool.
Then tell me the worker's id, its streams and its tools.`, role.ID, role.Title, kind, name, grantsClause(grant))
	return b.String()
}

var (
	headingLine = domain.LazyRegexp(`^#{1,6}\s+(.*)$`)
	bulletLine  = domain.LazyRegexp("^\\s*[-*+]\\s+`?([^`\\s:,—–]+)")
	streamID    = domain.LazyRegexp(`^s-[a-z0-9][a-z0-9-]*$`)
	toolName    = domain.LazyRegexp(`^[a-z][a-z0-9_]*$`)
)

// sectionItems returns the first word of each bullet under the role's
// heading whose title starts with section, keeping those that match want.
func sectionItems(content, section string, want *regexp.Regexp) []string {
	var out []string
	in := false
	for _, line := range strings.Split(content, "\n") {
		if m := headingLine().FindStringSubmatch(line); m != nil {
			in = strings.HasPrefix(strings.ToLower(strings.TrimSpace(m[1])), section)
			continue
		}
		if !in {
			continue
		}
		if m := bulletLine().FindStringSubmatch(line); m != nil && want.MatchString(m[1]) && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

func grantsClause(grant []string) string {
	if len(grant) == 0 {
		return "no grants"
	}
	return "grants [" + strings.Join(grant, ", ") + "] — exactly the Tools list, no more, so the worker never runs without them"
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "(none)"
	}
	return strings.Join(items, ", ")
}
