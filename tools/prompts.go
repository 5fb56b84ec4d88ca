package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// prompt is an MCP prompt visible only to workers holding every tool in needs.
type prompt struct {
	def     *mcp.Prompt
	needs   []string
	handler func(env *Env, granted []string) mcp.PromptHandler
}

func prompts() []prompt { return []prompt{helpPrompt(), rolePrompt(), hirePrompt()} }

func addPrompts(srv *mcp.Server, env *Env, granted []string) {
	for _, p := range usablePrompts(granted) {
		srv.AddPrompt(p.def, p.handler(env, granted))
	}
}

func usablePrompts(granted []string) []prompt {
	var out []prompt
	for _, p := range prompts() {
		if holdsAll(granted, p.needs) {
			out = append(out, p)
		}
	}
	return out
}

func holdsAll(granted, needs []string) bool {
	for _, n := range needs {
		if !slices.Contains(granted, n) {
			return false
		}
	}
	return true
}

func helpPrompt() prompt {
	return prompt{
		def: &mcp.Prompt{Name: "help", Description: "What you can do here: your prompts and tools."},
		handler: func(env *Env, granted []string) mcp.PromptHandler {
			return func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				var b strings.Builder
				fmt.Fprintf(&b, "You are %s in a helix-org organisation.\n\nPrompts you can use:\n", env.Caller)
				for _, p := range usablePrompts(granted) {
					fmt.Fprintf(&b, "- %s: %s\n", p.def.Name, p.def.Description)
				}
				b.WriteString("\nTools you hold:\n")
				for _, t := range All() {
					if slices.Contains(granted, t.Name) {
						first, _, _ := strings.Cut(t.Description, "\n")
						fmt.Fprintf(&b, "- %s: %s\n", t.Name, first)
					}
				}
				return textPrompt("helix-org help", b.String()), nil
			}
		},
	}
}

// StayQuiet is the block every role ends with: an agent woken by
// something its role does not cover says nothing, which is what keeps
// AI workers from waking each other in loops.
const StayQuiet = "On anything else: stay quiet — do not publish."

func rolePrompt() prompt {
	return prompt{
		def: &mcp.Prompt{Name: "role", Description: "Draft a Role (job description) from a title, save it with create_role, then offer to hire into it.",
			Arguments: []*mcp.PromptArgument{
				{Name: "title", Description: "the role's title, e.g. Support Engineer", Required: true},
				{Name: "notes", Description: "anything the role must cover"},
			}},
		needs: []string{"create_role"},
		handler: func(_ *Env, granted []string) mcp.PromptHandler {
			return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				title := strings.TrimSpace(req.Params.Arguments["title"])
				if title == "" {
					return nil, fmt.Errorf("argument title is required")
				}
				text := fmt.Sprintf(`Draft a Role for %q as markdown with these sections:

# %s
## Purpose — one paragraph on why the role exists.
## Streams — the streams it follows, one per line as `+"`- s-<id>: what arrives there`"+`.
## Responsibilities — what it does when woken by an event, as a list.
## How to respond — which streams it answers on, tone, length.
## Tools — the helix-org tools it needs and no more, one per line as `+"`- <tool>: why`"+`; it will be granted exactly these. Tools you can grant: %s.
## Boundaries — what it must never do; when to escalate and to whom.

End the role with this line, word for word:

%s

%s
Then save it by calling create_role with title %q and the markdown as content. Show me the id it returns, and offer to hire a worker into the role with the hire prompt (role: that id), which creates its streams, position and worker, subscribes the worker and grants it exactly the tools above.`,
					title, title, strings.Join(grantable(granted), ", "), StayQuiet, notesLine(req.Params.Arguments["notes"]), title)
				return textPrompt("Draft the "+title+" role", text), nil
			}
		},
	}
}

// grantable is the built-in tools a worker holds, so may grant on.
func grantable(granted []string) []string {
	var out []string
	for _, t := range All() {
		if slices.Contains(granted, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

func notesLine(notes string) string {
	if strings.TrimSpace(notes) == "" {
		return ""
	}
	return "It must cover: " + notes + "\n"
}

func textPrompt(desc, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: desc, Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: text}},
	}}
}
