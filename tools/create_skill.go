package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

type createSkillIn struct {
	Name        string            `json:"name" jsonschema:"the skill's name: 2 to 40 lowercase letters, digits or _, starting with a letter; its tool is skill_<name>"`
	Description string            `json:"description" jsonschema:"what the skill does, shown as its tool's description"`
	InputSchema json.RawMessage   `json:"inputSchema,omitempty" jsonschema:"the JSON Schema (type object) of the skill's input; by default any object"`
	Template    string            `json:"template,omitempty" jsonschema:"build from a template with handler instead of files"`
	Handler     string            `json:"handler,omitempty" jsonschema:"with template: the code — shell reads the input JSON on stdin and prints the output; python defines handle(input)"`
	Files       map[string]string `json:"files,omitempty" jsonschema:"without template: the build context, file path to content, with a Dockerfile FROM skill-base"`
	Examples    []skillExampleIn  `json:"examples,omitempty" jsonschema:"calls the new version must answer as given before it serves"`
}

type skillExampleIn struct {
	Input  json.RawMessage `json:"input" jsonschema:"an input the skill is called with"`
	Output json.RawMessage `json:"output" jsonschema:"the JSON it must answer (a text answer is a JSON string)"`
}

func createSkill() Tool {
	return define("create_skill", "Build tool skill_NAME: :8080, GET /health, POST /execute (JSON). "+
		"handler: shell reads input on stdin, prints output; python defines handle(input). "+
		"Else files with a Dockerfile FROM skill-base. Examples must pass; no network.",
		func(ctx context.Context, env *Env, in createSkillIn) (skillView, error) {
			runner, err := skillRunner(env)
			if err != nil {
				return skillView{}, err
			}
			examples, err := skillExamples(in.InputSchema, in.Examples)
			if err != nil {
				return skillView{}, err
			}
			caller, err := env.Store.GetWorker(ctx, env.Caller)
			if err != nil {
				return skillView{}, err
			}
			sk, err := runner.Create(ctx, domain.SkillSpec{Name: in.Name, Description: in.Description, InputSchema: in.InputSchema,
				Template: in.Template, Handler: in.Handler, Files: in.Files, Examples: examples, CreatedBy: env.Caller,
				ByHuman: caller.Kind == domain.WorkerHuman}, narrator(ctx, env))
			if err != nil {
				return skillView{}, err
			}
			return viewOf(sk), nil
		}, enum("template", domain.SkillTemplates), asObject("inputSchema", "examples.input")).annotated("Create skill", adds)
}

// skillExamples checks each example's input against the skill's input
// schema, so an example that could never be called is refused before
// anything is built.
func skillExamples(schema json.RawMessage, in []skillExampleIn) ([]domain.SkillExample, error) {
	var out []domain.SkillExample
	if len(in) == 0 {
		return out, nil
	}
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	resolved, err := resolveSchema(schema)
	if err != nil {
		return nil, domain.Invalid("inputSchema", "must be a JSON Schema object with \"type\": \"object\": %v", err)
	}
	for i, ex := range in {
		var v any
		if err := json.Unmarshal(ex.Input, &v); err != nil {
			return nil, domain.Invalid(fmt.Sprintf("examples[%d].input", i), "is not JSON: %v", err)
		}
		if err := resolved.Validate(v); err != nil {
			return nil, domain.Invalid(fmt.Sprintf("examples[%d].input", i), "does not match inputSchema: %v", err)
		}
		out = append(out, domain.SkillExample{Input: ex.Input, Output: ex.Output})
	}
	return out, nil
}
