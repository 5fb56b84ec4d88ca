package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// SkillRunner builds, runs, rolls back and removes skills; the skill
// factory (agent/skill) satisfies it. It is nil when the server has no
// Docker. narrate, when not nil, is told each step as it happens.
type SkillRunner interface {
	Create(ctx context.Context, spec domain.SkillSpec, narrate func(string)) (domain.Skill, error)
	Call(ctx context.Context, name string, input json.RawMessage, narrate func(string)) (json.RawMessage, error)
	Rollback(ctx context.Context, actor, name string, narrate func(string)) (domain.Skill, error)
	Delete(ctx context.Context, actor, name string) error
	// Networks are the networks a skill joins beyond its own (egress):
	// what it answers may then carry anyone's words.
	Networks(ctx context.Context, name string) ([]string, error)
}

// errNoSkills explains why the skill tools cannot work on this server.
var errNoSkills = errors.New("skills are not available on this server: they need a Docker Engine (see docs/skills.md)")

func skillRunner(env *Env) (SkillRunner, error) {
	if env.Skills == nil {
		return nil, errNoSkills
	}
	return env.Skills, nil
}

// KnownTools is every tool name a grant may name: the built-in tools,
// each skill's skill_<name> and each outside server's <server>__<tool>.
func KnownTools(skills []domain.Skill, outside []domain.OutsideTool) []string {
	known := Names()
	for _, sk := range skills {
		known = append(known, sk.ToolName())
	}
	for _, o := range outside {
		known = append(known, o.ToolName())
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
// granted, with the skill's own input schema; its calls run through Call
// (skillTool).
func addSkillTools(srv *mcp.Server, env *Env, granted []string) {
	for _, sk := range env.SkillDefs {
		if servable(sk, granted) {
			srv.AddTool(skillDef(sk), answered)
		}
	}
}

// skillTool is skill_<name> as Call runs it: its arguments checked
// against the skill's input schema, its output answered as the skill's
// own text. A skill that is not callable, or whose schema does not
// resolve, is no tool.
func skillTool(env *Env, tool string) (Tool, bool) {
	i := slices.IndexFunc(env.SkillDefs, func(sk domain.Skill) bool { return sk.ToolName() == tool })
	if i < 0 || !callable(env.SkillDefs[i]) {
		return Tool{}, false
	}
	sk := env.SkillDefs[i]
	schema, err := resolveSchema(sk.InputSchema)
	if err != nil {
		return Tool{}, false
	}
	name, label := sk.Name, sk.Label
	return Tool{Name: tool, Title: sk.Name, Description: sk.Description, def: fixed(skillDef(sk)),
		check: func(args json.RawMessage) (json.RawMessage, error) { return checkSkillInput(name, schema, args) },
		call: func(ctx context.Context, env *Env, args json.RawMessage) (any, error) {
			return runSkill(ctx, env, name, label, args)
		},
		answer: func(out any) ([]byte, any, error) {
			o := out.(skillOutput)
			return o.Output, o, nil
		}}, true
}

// servable: a skill is served as a tool to a worker granted it while it
// is callable and its input schema resolves (refused at create time, so
// a bad one never breaks the whole server).
func servable(sk domain.Skill, granted []string) bool {
	if !callable(sk) || !slices.Contains(granted, sk.ToolName()) {
		return false
	}
	_, err := resolveSchema(sk.InputSchema)
	return err == nil
}

// skillDef is skill_<name> as clients are shown it. A skill runs in a
// container without network and can change nothing in the org but keep
// a file it hands back: not read-only, not destructive, not open-world,
// and, being its author's code, not claimed idempotent.
func skillDef(sk domain.Skill) *mcp.Tool {
	return &mcp.Tool{Name: sk.ToolName(), Title: sk.Name, Description: sk.Description + " (a skill built by " + sk.CreatedBy + ")",
		InputSchema: sk.InputSchema, OutputSchema: skillOutSchema,
		Annotations: &mcp.ToolAnnotations{Title: sk.Name, DestructiveHint: new(false), OpenWorldHint: new(false)}}
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

// checkSkillInput checks a call's input against the skill's schema; no
// input is an empty object.
func checkSkillInput(name string, schema *jsonschema.Resolved, input json.RawMessage) (json.RawMessage, error) {
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, domain.Invalid("input", "is not JSON: %v", err)
	}
	if err := schema.Validate(v); err != nil {
		return nil, domain.Invalid("input", "does not match skill %s's input schema: %v", name, err)
	}
	return input, nil
}

// runSkill calls a skill with input its schema passed. What it answers
// carries label, the label its code was written under: the caller's run
// is raised by it, and a file it answers with is kept with it.
func runSkill(ctx context.Context, env *Env, name string, label domain.Label, input json.RawMessage) (skillOutput, error) {
	runner, err := skillRunner(env)
	if err != nil {
		return skillOutput{}, err
	}
	out, err := runner.Call(ctx, name, input, narrator(ctx, env))
	if err != nil {
		return skillOutput{}, err
	}
	nets, err := runner.Networks(ctx, name)
	if err != nil {
		return skillOutput{}, fmt.Errorf("skill %s: %w", name, err)
	}
	if len(nets) > 0 {
		// A skill that reaches out answers with what it found there.
		label = label.Join(domain.Untrusted(fmt.Sprintf("skill %q, which joins networks %s", name, strings.Join(nets, ", "))))
	}
	if err := env.saw(ctx, label); err != nil {
		return skillOutput{}, err
	}
	ctx = store.Writing(ctx, store.WritingLabel(ctx).Join(label))
	if out, err = keepFile(ctx, env, out); err != nil {
		return skillOutput{}, fmt.Errorf("skill %s: %w", name, err)
	}
	return skillOutput{Output: out}, nil
}

// narrator puts a skill's steps on the log of the activation that called
// the tool, so worker_log shows "building… healthy… calling…" between the
// tool call and its result. Outside an activation nobody is listening. A
// note that cannot be written is dropped: the tool's result still says
// how the step ended.
func narrator(ctx context.Context, env *Env) func(string) {
	if env.ActivationID == "" {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	return func(text string) {
		dispatch.AppendActivationLog(ctx, env.Store, env.Caller, env.ActivationID, domain.LogEntry{Kind: domain.LogNote, Text: text})
	}
}

// skillFile is how a skill hands back a file: its output is an object
// whose "file" holds a name, a content type and the content as "text" or
// "base64". The content is kept as an attachment and the caller gets its
// description with a ref instead, for get_attachment or a message's
// attachments.
type skillFile struct {
	Name        string  `json:"name"`
	ContentType string  `json:"contentType"`
	Text        *string `json:"text"`
	Base64      *string `json:"base64"`
}

func keepFile(ctx context.Context, env *Env, out json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(out, &obj) != nil || obj["file"] == nil {
		return out, nil
	}
	var f skillFile
	if err := json.Unmarshal(obj["file"], &f); err != nil || f.Name == "" || (f.Text == nil) == (f.Base64 == nil) {
		return out, nil // some other "file": not ours to interpret
	}
	var content []byte
	if f.Text != nil {
		content = []byte(*f.Text)
	} else {
		var err error
		if content, err = base64.StdEncoding.DecodeString(*f.Base64); err != nil {
			return nil, fmt.Errorf("its output file %s: base64: %w", f.Name, err)
		}
	}
	att, err := env.Store.SaveFile(ctx, domain.Attachment{Name: f.Name, ContentType: f.ContentType}, content)
	if err != nil {
		return nil, err
	}
	if obj["file"], err = json.Marshal(att); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// skillView is a skill as the tools show it.
type skillView struct {
	domain.Skill
	// Tool is the skill's own tool, for grant_tool.
	Tool string `json:"tool"`
}

func viewOf(sk domain.Skill) skillView { return skillView{Skill: sk, Tool: sk.ToolName()} }

// versionView is one build of a skill as list_skills shows it.
type versionView struct {
	Version   int                       `json:"version"`
	Status    domain.SkillVersionStatus `json:"status"`
	Live      bool                      `json:"live,omitempty"`
	Error     string                    `json:"error,omitempty" jsonschema:"the first line of why it failed; get_skill has all of it"`
	CreatedBy string                    `json:"createdBy"`
	CreatedAt time.Time                 `json:"createdAt"`
}

func versionsOf(sk domain.Skill, vs []domain.SkillVersion) []versionView {
	out := []versionView{}
	for _, v := range vs {
		first, _, _ := strings.Cut(v.Error, "\n")
		out = append(out, versionView{Version: v.Version, Status: v.Status, Live: v.Version == sk.Version && sk.Status != domain.SkillFailed,
			Error: first, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt})
	}
	return out
}
