package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// fakeSkills stands in for the skill factory: it records skills and their
// versions in the real store as the factory does, answers calls with
// output (by default an echo of the input), narrates one line per step,
// and rolls back to the newest ok version below the serving one. The
// factory itself is tested against Docker in agent/skill, and through
// these tools end to end in cmd/helix-org.
type fakeSkills struct {
	st        *store.Store
	createErr error
	output    json.RawMessage
	networks  map[string][]string

	mu    sync.Mutex
	calls []string
	specs []domain.SkillSpec
}

var _ SkillRunner = (*fakeSkills)(nil)

func (f *fakeSkills) Create(ctx context.Context, spec domain.SkillSpec, narrate func(string)) (domain.Skill, error) {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	say(narrate, "building skill "+spec.Name)
	version := 1
	if vs, _ := f.st.SkillVersions(ctx, spec.Name); len(vs) > 0 {
		version = vs[len(vs)-1].Version + 1
	}
	schema := spec.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	ver := domain.SkillVersion{Name: spec.Name, Version: version, Status: domain.VersionOK, Description: spec.Description, InputSchema: schema,
		Template: spec.Template, Files: map[string]string{"handler.sh": spec.Handler}, Examples: spec.Examples, BuildLog: "Step 1/1 : FROM skill-base", CreatedBy: spec.CreatedBy}
	if f.createErr != nil {
		ver.Status, ver.Error = domain.VersionFailed, f.createErr.Error()
		if err := f.st.SaveSkillVersion(ctx, ver); err != nil {
			return domain.Skill{}, err
		}
		return domain.Skill{}, f.createErr
	}
	if err := f.st.SaveSkillVersion(ctx, ver); err != nil {
		return domain.Skill{}, err
	}
	return f.st.SaveSkill(ctx, spec.CreatedBy, domain.Skill{Name: spec.Name, Description: spec.Description, InputSchema: schema,
		Template: spec.Template, Version: version, Image: "fake:v1", Container: "c-fake", Status: domain.SkillReady, CreatedBy: spec.CreatedBy})
}

func (f *fakeSkills) Call(_ context.Context, name string, input json.RawMessage, narrate func(string)) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+string(input))
	f.mu.Unlock()
	say(narrate, "calling skill "+name)
	if f.output != nil {
		return f.output, nil
	}
	return json.RawMessage(`{"echo":` + string(input) + `}`), nil
}

func (f *fakeSkills) Networks(_ context.Context, name string) ([]string, error) {
	return f.networks[name], nil
}

func (f *fakeSkills) Rollback(ctx context.Context, actor, name string, narrate func(string)) (domain.Skill, error) {
	cur, err := f.st.GetSkill(ctx, name)
	if err != nil {
		return domain.Skill{}, err
	}
	vs, err := f.st.SkillVersions(ctx, name)
	if err != nil {
		return domain.Skill{}, err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if v := vs[i]; v.Version < cur.Version && v.Status == domain.VersionOK {
			say(narrate, "rolling back")
			from := cur.Version
			cur.Version, cur.Description = v.Version, v.Description
			return f.st.RollbackSkill(ctx, actor, cur, from)
		}
	}
	return domain.Skill{}, domain.Invalid("name", "skill %s has no working version before version %d to roll back to", name, cur.Version)
}

func (f *fakeSkills) Delete(ctx context.Context, actor, name string) error {
	return f.st.DeleteSkill(ctx, actor, name)
}

func say(narrate func(string), text string) {
	if narrate != nil {
		narrate(text)
	}
}

// withSkills gives the fixture's owner env a fake runner and returns it.
func withSkills(f fixture) *fakeSkills {
	fs := &fakeSkills{st: f.env.Store}
	f.env.Skills = fs
	return fs
}

// learnSkills lets the owner's grant_tool name the skills that exist now,
// as the server does on every request.
func learnSkills(t *testing.T, f fixture) []domain.Skill {
	t.Helper()
	skills, err := f.env.Store.ListSkills(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	f.env.Known = KnownTools(skills, nil)
	return skills
}

const csvSchema = `{"type":"object","properties":{"csv":{"type":"string"}},"required":["csv"]}`

// TestSkillToolsOverTransport: skill_<name> is listed and callable only
// for a worker granted it, with the skill's own input schema enforced.
func TestSkillToolsOverTransport(t *testing.T) {
	f := newFixture(t)
	fs := withSkills(f)
	mustCall[any](t, f.env, "create_skill", map[string]any{"name": "csv_sum", "description": "Sum CSV columns",
		"inputSchema": json.RawMessage(csvSchema), "template": "shell", "handler": "echo"})
	broken := domain.Skill{Name: "broken", Description: "x", InputSchema: json.RawMessage(`{"type":"object"}`), Version: 1, Status: domain.SkillFailed, CreatedBy: "w-owner"}
	must(t)(f.env.Store.SaveSkill(t.Context(), "w-owner", broken))
	f.grant(t, "w-echo", "skill_broken")
	skills := learnSkills(t, f)

	connect := func(worker string) *mcp.ClientSession {
		granted, err := f.env.Store.LiveTools(t.Context(), worker)
		if err != nil {
			t.Fatal(err)
		}
		env := &Env{Store: f.env.Store, Caller: worker, Known: KnownTools(skills, nil), Skills: fs, SkillDefs: skills}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := NewServer(env, granted).Connect(t.Context(), st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	toolsOf := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			if strings.HasPrefix(tool.Name, domain.SkillToolPrefix) {
				names = append(names, tool.Name)
			}
		}
		return names
	}

	without := connect("w-echo")
	if got := toolsOf(without); len(got) != 0 {
		t.Errorf("w-echo without the grant sees %v (a failed skill is not served either)", got)
	}
	res, err := without.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill_csv_sum", Arguments: map[string]any{"csv": "a\n1"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `missing grant: worker w-echo does not hold grant "skill_csv_sum"`) {
		t.Errorf("ungranted skill call = %+v, %v; want a tool error naming the missing grant", res, err)
	}
	mustCall[any](t, f.env, "grant_tool", map[string]any{"worker": "w-echo", "tool": "skill_csv_sum"})
	echo := connect("w-echo")
	if got := toolsOf(echo); !slices.Equal(got, []string{"skill_csv_sum"}) {
		t.Errorf("w-echo with the grant sees %v", got)
	}
	list, _ := echo.ListTools(t.Context(), nil)
	for _, tool := range list.Tools {
		if tool.Name == "skill_csv_sum" {
			if b, _ := json.Marshal(tool.InputSchema); !strings.Contains(string(b), `"required":["csv"]`) {
				t.Errorf("skill tool schema = %s", b)
			}
		}
	}
	res, err = echo.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill_csv_sum", Arguments: map[string]any{"csv": "a\n1"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"output":{"echo":{"csv":"a\n1"}}}` {
		t.Errorf("output = %s", b)
	}
	res, err = echo.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill_csv_sum", Arguments: map[string]any{"rows": 3}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "does not match skill csv_sum's input schema") {
		t.Errorf("bad input: %v %+v", err, res)
	}
	if len(fs.calls) != 1 {
		t.Errorf("runner calls = %q, want only the valid one", fs.calls)
	}
}

func TestSkillToolsWithoutDocker(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"create_skill", map[string]any{"name": "x_y", "description": "d", "template": "shell", "handler": "echo"}},
		{"call_skill", map[string]any{"name": "x_y"}},
		{"delete_skill", map[string]any{"name": "x_y"}},
	} {
		_, err := call[any](t, f.env, tc.tool, tc.args)
		if !errors.Is(err, errNoSkills) {
			t.Errorf("%s without a runner: %v", tc.tool, err)
		}
	}
}
