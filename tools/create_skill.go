package tools

import (
	"context"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

type createSkillIn struct {
	Name        string            `json:"name" jsonschema:"2-40 lowercase letters, digits or underscores; the skill's own tool is skill_<name>"`
	Description string            `json:"description" jsonschema:"what the skill does; its tool's description"`
	InputSchema json.RawMessage   `json:"inputSchema,omitempty" jsonschema:"JSON Schema of the input, an object schema; default: any object"`
	Template    string            `json:"template,omitempty" jsonschema:"shell: a busybox sh handler (no registry needed); python: handle(input) in Python, FROM python:3-slim (only where an operator loaded that image)"`
	Handler     string            `json:"handler,omitempty" jsonschema:"the handler code, with a template"`
	Files       map[string]string `json:"files,omitempty" jsonschema:"build context by relative path; without a template it must hold a Dockerfile, e.g. FROM skill-base (busybox and the shim) then COPY your script to /skill/handler.sh"`
}

func createSkill() Tool {
	return define("create_skill", `Build a capability you lack as a skill: code plus a Dockerfile (or a template and handler) that the server builds, runs and health-checks, then serves as the tool skill_<name>.
The service listens on port 8080 and answers GET /health and POST /execute (input JSON in, output out). With the shell template the handler is a busybox sh script: the input JSON is on stdin, each top-level field is also in $INPUT_<NAME>, and stdout is the output.
Builds have no network and never pull images. A failed build or health check returns the build log or the service's output: fix the code and call create_skill again with the same name (a new version). Secrets are set by an operator in config, never here.`,
		func(ctx context.Context, env *Env, in createSkillIn) (skillView, error) {
			runner, err := skillRunner(env)
			if err != nil {
				return skillView{}, err
			}
			sk, err := runner.Create(ctx, domain.SkillSpec{Name: in.Name, Description: in.Description, InputSchema: in.InputSchema,
				Template: in.Template, Handler: in.Handler, Files: in.Files, CreatedBy: env.Caller})
			if err != nil {
				return skillView{}, err
			}
			return viewOf(sk), nil
		}, enum("template", domain.SkillTemplates))
}
