package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

type createSkillIn struct {
	Name        string            `json:"name" jsonschema:"2-40 lowercase letters, digits or underscores; the skill's own tool is skill_<name>"`
	Description string            `json:"description" jsonschema:"what the skill does; its tool's description"`
	InputSchema json.RawMessage   `json:"inputSchema,omitempty" jsonschema:"JSON Schema of the input, an object schema; default: any object"`
	Template    string            `json:"template,omitempty" jsonschema:"shell: a busybox sh handler; python: handle(input) in Python 3 with its standard library. Neither needs a registry"`
	Handler     string            `json:"handler,omitempty" jsonschema:"the handler code, with a template"`
	Files       map[string]string `json:"files,omitempty" jsonschema:"build context by relative path; without a template it must hold a Dockerfile, e.g. FROM skill-base (busybox and the shim) then COPY your script to /skill/handler.sh, or FROM skill-python"`
	Examples    []skillExampleIn  `json:"examples,omitempty" jsonschema:"inputs with the exact output expected; the new version goes live only if it answers every one (JSON compared after normalising: key order, spacing and 1 vs 1.0 aside)"`
}

type skillExampleIn struct {
	Input  json.RawMessage `json:"input" jsonschema:"an input object, matching inputSchema"`
	Output json.RawMessage `json:"output" jsonschema:"the JSON the skill must answer (a text answer is a JSON string)"`
}

func createSkill() Tool {
	return define("create_skill", `Build a capability you lack as a skill: code plus a Dockerfile (or a template and handler) that the server builds, runs and health-checks, then serves as the tool skill_<name>.
The service listens on port 8080 and answers GET /health and POST /execute (input JSON in, output out). With the shell template the handler is a busybox sh script: the input JSON is on stdin, each top-level field is also in $INPUT_<NAME>, and stdout is the output. With the python template it defines handle(input) and returns JSON-able data; to return a file answer {"file": {"name", "contentType", "text" or "base64"}} and the caller gets an attachment ref.
Give examples (input → expected output): the new version goes live only when healthy and every example passes; otherwise the old one keeps serving and the error shows the example that failed.
Builds have no network and never pull images. A failure returns the build log, the service's output or the failed example: fix the code and call create_skill again with the same name (a new version). After skill.max_failed_builds failures in a row, stop and ask a human. Secrets are set by an operator in config, never here.`,
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
		}, enum("template", domain.SkillTemplates))
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
