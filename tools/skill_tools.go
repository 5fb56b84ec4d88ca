package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
)

// SkillRunner builds, runs and removes skills; the skill factory
// (agent/skill) satisfies it. It is nil when the server has no Docker.
type SkillRunner interface {
	Create(ctx context.Context, spec domain.SkillSpec) (domain.Skill, error)
	Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error)
	Delete(ctx context.Context, actor, name string) error
}

// errNoSkills explains why the skill tools cannot work on this server.
var errNoSkills = errors.New("skills are not available on this server: they need a Docker Engine (see the README's Docker section)")

func skillRunner(env *Env) (SkillRunner, error) {
	if env.Skills == nil {
		return nil, errNoSkills
	}
	return env.Skills, nil
}

// KnownTools is every tool name a grant may name: the built-in tools and
// each skill's skill_<name>.
func KnownTools(skills []domain.Skill) []string {
	known := Names()
	for _, sk := range skills {
		known = append(known, sk.ToolName())
	}
	return known
}

// SkillsKey changes whenever the set of skill tools a server offers would,
// so a cached per-worker server is rebuilt.
func SkillsKey(skills []domain.Skill) string {
	var b strings.Builder
	for _, sk := range skills {
		b.WriteString(sk.Name + "@" + strconv.Itoa(sk.Version))
		if !callable(sk) {
			b.WriteString("!")
		}
		b.WriteByte(',')
	}
	return b.String()
}

// callable skills are served as tools: ready ones and stopped ones, which
// start on their next call.
func callable(sk domain.Skill) bool { return sk.Status != domain.SkillFailed }

// skillOutSchema is the output schema of every skill tool.
var skillOutSchema = json.RawMessage(`{"type":"object","properties":{"output":{"description":"what the skill answered: its JSON, or its text as a string"}},"required":["output"]}`)

// addSkillTools adds skill_<name> for each callable skill the worker is
// granted, with the skill's own input schema.
func addSkillTools(srv *mcp.Server, env *Env, granted []string) {
	for _, sk := range env.SkillDefs {
		if !callable(sk) || !slices.Contains(granted, sk.ToolName()) {
			continue
		}
		schema, err := resolveSchema(sk.InputSchema)
		if err != nil {
			continue // refused at create time; never break the whole server
		}
		name := sk.Name
		srv.AddTool(&mcp.Tool{Name: sk.ToolName(), Description: sk.Description + " (a skill built by " + sk.CreatedBy + ")",
			InputSchema: sk.InputSchema, OutputSchema: skillOutSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				out, err := runSkill(ctx, env, name, schema, req.Params.Arguments)
				if err != nil {
					res := &mcp.CallToolResult{}
					res.SetError(err)
					return res, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out.Output)}}, StructuredContent: out}, nil
			})
	}
}

type skillOutput struct {
	Output json.RawMessage `json:"output"`
}

// resolveSchema parses a skill's input schema for validating calls.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, errors.New(`input schema is not of type "object"`)
	}
	return s.Resolve(nil)
}

// runSkill validates input against the skill's schema and calls it.
func runSkill(ctx context.Context, env *Env, name string, schema *jsonschema.Resolved, input json.RawMessage) (skillOutput, error) {
	runner, err := skillRunner(env)
	if err != nil {
		return skillOutput{}, err
	}
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return skillOutput{}, domain.Invalid("input", "is not JSON: %v", err)
	}
	if err := schema.Validate(v); err != nil {
		return skillOutput{}, domain.Invalid("input", "does not match skill %s's input schema: %v", name, err)
	}
	out, err := runner.Call(ctx, name, input)
	if err != nil {
		return skillOutput{}, err
	}
	return skillOutput{Output: out}, nil
}

// skillView is a skill as the tools show it.
type skillView struct {
	domain.Skill
	// Tool is the skill's own tool, for grant_tool.
	Tool string `json:"tool"`
}

func viewOf(sk domain.Skill) skillView { return skillView{Skill: sk, Tool: sk.ToolName()} }
