package tools

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// connect serves env's caller with the granted tools over an in-memory
// transport and returns a real client session to it.
func connect(t *testing.T, env *Env, granted []string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := NewServer(env, granted).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	var b strings.Builder
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestPrompts(t *testing.T) {
	cases := []struct {
		name        string
		granted     []string
		wantPrompts []string
		// wantHelp and notHelp are lines the help prompt must and must not hold.
		wantHelp []string
		notHelp  []string
	}{
		{
			name:        "no grants: help only",
			wantPrompts: []string{"help"},
			wantHelp:    []string{"You are w-maya", "- help: "},
			notHelp:     []string{"- role: ", "- publish: ", "- create_role: "},
		},
		{
			name:        "publish does not unlock the role prompt",
			granted:     []string{"publish", "read_events"},
			wantPrompts: []string{"help"},
			wantHelp:    []string{"- help: ", "- publish: Publish a message on a Stream;", "- read_events: "},
			notHelp:     []string{"- role: ", "- create_role: "},
		},
		{
			name:        "create_role unlocks the role prompt",
			granted:     []string{"create_role"},
			wantPrompts: []string{"help", "role"},
			wantHelp:    []string{"- help: ", "- role: Draft a Role", "- create_role: Create a Role"},
			notHelp:     []string{"- publish: "},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			cs := connect(t, f.as("w-maya"), tc.granted)
			list, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			var names []string
			for _, p := range list.Prompts {
				names = append(names, p.Name)
			}
			if diff := cmp.Diff(tc.wantPrompts, names); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			help, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "help"})
			if err != nil {
				t.Fatalf("help: %v", err)
			}
			text := promptText(t, help)
			for _, w := range tc.wantHelp {
				if !strings.Contains(text, w) {
					t.Errorf("help does not mention %q:\n%s", w, text)
				}
			}
			for _, n := range tc.notHelp {
				if strings.Contains(text, n) {
					t.Errorf("help mentions %q, which the worker cannot use:\n%s", n, text)
				}
			}
		})
	}
}

func TestRolePrompt(t *testing.T) {
	cases := []struct {
		name    string
		args    map[string]string
		want    []string
		notWant []string
		wantErr string
	}{
		{
			name:    "drafts from the title and says how to save it",
			args:    map[string]string{"title": "Support Engineer"},
			want:    []string{"# Support Engineer", `calling create_role with title "Support Engineer"`, "## Tools", StayQuiet, "hire prompt"},
			notWant: []string{"It must cover"},
		},
		{
			name: "notes are passed on",
			args: map[string]string{"title": "Support Engineer", "notes": "refunds under $50"},
			want: []string{"It must cover: refunds under $50"},
		},
		{
			name:    "title is required",
			args:    map[string]string{"notes": "anything"},
			wantErr: "argument title is required",
		},
	}
	f := newFixture(t)
	cs := connect(t, f.env, []string{"create_role"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "role", Arguments: tc.args})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("role prompt: %v", err)
			}
			text := promptText(t, res)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("prompt does not contain %q:\n%s", w, text)
				}
			}
			for _, n := range tc.notWant {
				if strings.Contains(text, n) {
					t.Errorf("prompt contains %q:\n%s", n, text)
				}
			}
		})
	}
}

// TestRolePromptNeedsGrant checks that a worker without create_role cannot
// fetch the role prompt by name either.
func TestRolePromptNeedsGrant(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.as("w-maya"), []string{"publish"})
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "role", Arguments: map[string]string{"title": "X"}}); err == nil {
		t.Error("role prompt served to a worker without create_role")
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// supportRole is a role as the role prompt asks for it: Streams and Tools
// sections, one tool that does not exist, the stay-quiet block.
const supportRole = "# Support Engineer\n\n## Purpose\nAnswer customers.\n\n## Streams\n- `s-support`: questions arrive here\n- s-escalations: hand-offs to humans\n\n" +
	"## Tools\n- `publish`: to answer\n- read_events: for context\n- teleport: wishful\n\n## Boundaries\nNo refunds.\n\n" + StayQuiet + "\n"

// TestPromptsGolden pins the text a model reads for each prompt.
func TestPromptsGolden(t *testing.T) {
	f := newFixture(t)
	must(t)(f.env.Store.CreateRole(t.Context(), "w-owner", domain.Role{ID: "r-support-engineer", Title: "Support Engineer", Content: supportRole}))
	owner := connect(t, f.env, Names())
	cases := []struct {
		file string
		cs   *mcp.ClientSession
		name string
		args map[string]string
	}{
		{"prompts/help_owner.golden", owner, "help", nil},
		{"prompts/help_no_grants.golden", connect(t, f.as("w-maya"), nil), "help", nil},
		{"prompts/role.golden", owner, "role", map[string]string{"title": "Support Engineer", "notes": "refunds under $50 go to a human"}},
		{"prompts/hire.golden", owner, "hire", map[string]string{"role": "r-support-engineer", "name": "Sam"}},
		{"prompts/hire_no_sections.golden", owner, "hire", map[string]string{"role": "r-support", "kind": "human"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			res, err := tc.cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, res.Description+"\n---\n"+promptText(t, res))
		})
	}
}

func TestHirePromptErrors(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f.env, Names())
	for _, tc := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{}, "argument role is required"},
		{map[string]string{"role": "r-nope"}, `role "r-nope": not found`},
		{map[string]string{"role": "r-support", "kind": "robot"}, `argument kind "robot": want ai or human`},
	} {
		if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "hire", Arguments: tc.args}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("hire %v: %v; want %q", tc.args, err, tc.want)
		}
	}
	// Without the tools the playbook calls, the prompt is not offered.
	if _, err := connect(t, f.env, []string{"create_role", "hire_worker"}).GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "hire",
		Arguments: map[string]string{"role": "r-support"}}); err == nil {
		t.Error("hire prompt served to a worker that cannot follow it")
	}
}
