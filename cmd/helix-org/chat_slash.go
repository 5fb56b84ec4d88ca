package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/domain"
)

// slashLine matches "/name rest": a command, not a path such as /etc/x.
var slashLine = domain.LazyRegexp(`^/([A-Za-z][A-Za-z0-9_-]*)(?:\s+(.*))?$`)

// expandSlash turns a "/name args" line into the text the model gets: the
// worker's MCP prompt of that name, expanded on the server. It reports
// false when the line was answered here (/help's list, an unknown
// command, a bad argument) and the model need not be asked. Lines that
// are not commands go to the model as typed.
func expandSlash(ctx context.Context, out io.Writer, tools *agent.Toolbox, line string) (string, bool) {
	m := slashLine().FindStringSubmatch(line)
	if m == nil {
		return line, true
	}
	name, rest := m[1], strings.TrimSpace(m[2])
	prompts, err := tools.Prompts(ctx)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return "", false
	}
	if name == "help" {
		printHelp(out, prompts, tools.Names())
	}
	i := slices.IndexFunc(prompts, func(p *mcp.Prompt) bool { return p.Name == name })
	if i < 0 {
		if name != "help" {
			fmt.Fprintf(out, "unknown command /%s: /help lists what you can use\n", name)
		}
		return "", false
	}
	args, err := promptArgs(prompts[i], rest)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n  usage: %s\n", err, usage(prompts[i]))
		return "", false
	}
	text, err := tools.Prompt(ctx, name, args)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return "", false
	}
	fmt.Fprintf(out, "  [prompt %s%s: %d characters to the model]\n", name, argsShown(prompts[i], args), utf8.RuneCountInString(text))
	return text, true
}

// promptArgs reads a command's arguments: name=value words (quotes allowed)
// set those arguments, and the other words, joined, fill the first
// argument not set by name — so "/role Support Engineer notes=refunds"
// gives title "Support Engineer".
func promptArgs(p *mcp.Prompt, rest string) (map[string]string, error) {
	words, err := splitWords(rest)
	if err != nil {
		return nil, err
	}
	args := map[string]string{}
	var free []string
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && slices.ContainsFunc(p.Arguments, func(a *mcp.PromptArgument) bool { return a.Name == k }) {
			args[k] = v
			continue
		}
		free = append(free, w)
	}
	if len(free) > 0 {
		i := slices.IndexFunc(p.Arguments, func(a *mcp.PromptArgument) bool { _, set := args[a.Name]; return !set })
		if i < 0 {
			return nil, fmt.Errorf("/%s got %q but has no argument left to put it in", p.Name, strings.Join(free, " "))
		}
		args[p.Arguments[i].Name] = strings.Join(free, " ")
	}
	for _, a := range p.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return nil, fmt.Errorf("/%s needs %s (%s)", p.Name, a.Name, a.Description)
		}
	}
	return args, nil
}

// splitWords splits on spaces, keeping "double quoted" runs together.
func splitWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t'):
			if inWord {
				words, inWord = append(words, b.String()), false
				b.Reset()
			}
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

func usage(p *mcp.Prompt) string {
	u := "/" + p.Name
	for i, a := range p.Arguments {
		if i == 0 && a.Required {
			u += " <" + a.Name + ">"
		} else {
			u += " [" + a.Name + "=…]"
		}
	}
	return u
}

func argsShown(p *mcp.Prompt, args map[string]string) string {
	var b strings.Builder
	for _, a := range p.Arguments {
		if v, ok := args[a.Name]; ok {
			fmt.Fprintf(&b, " %s=%q", a.Name, v)
		}
	}
	return b.String()
}

// printHelp lists the commands (the worker's prompts) and its tools.
func printHelp(out io.Writer, prompts []*mcp.Prompt, tools []string) {
	rows := [][2]string{{"/help", "this list; then the help prompt goes to the model"}, {"/exit", "leave (or Ctrl-D)"}}
	for _, p := range prompts {
		if p.Name != "help" {
			rows = append(rows, [2]string{usage(p), p.Description})
		}
	}
	width := 0
	for _, r := range rows {
		width = max(width, utf8.RuneCountInString(r[0]))
	}
	fmt.Fprintln(out, "Commands (prompts are expanded on the server before they reach the model):")
	for _, r := range rows {
		fmt.Fprintf(out, "  %-*s  %s\n", width, r[0], r[1])
	}
	fmt.Fprintf(out, "Tools you can use (%d): %s\n", len(tools), strings.Join(tools, ", "))
	if slices.Contains(tools, agent.FindToolsName) {
		fmt.Fprintln(out, "You hold more: the model finds them with find_tools (helix-org tools lists them all).")
	}
}

// toolDisplay shows each tool call and its result as it happens: one line
// each, or in full with --verbose.
type toolDisplay struct {
	out     io.Writer
	verbose bool
}

func (d toolDisplay) call(c llm.ToolCall) {
	if d.verbose {
		fmt.Fprintf(d.out, "  [%s %s]\n", c.Name, c.Input)
		return
	}
	fmt.Fprintf(d.out, "  [%s %s]\n", c.Name, compact(string(c.Input), 200))
}

func (d toolDisplay) result(c llm.ToolCall, r llm.ToolResult) {
	label := c.Name + " →"
	if r.IsError {
		label = c.Name + " error:"
	}
	if d.verbose {
		fmt.Fprintf(d.out, "  [%s\n    %s]\n", label, strings.ReplaceAll(strings.TrimRight(r.Content, "\n"), "\n", "\n    "))
		return
	}
	fmt.Fprintf(d.out, "  [%s %s]\n", label, compact(r.Content, 160))
}

// compact is text on one line, cut to n characters.
func compact(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
