package tools

import (
	"context"
	"encoding/json"

	"github.com/helixml/helix-org/domain"
)

type callSkillIn struct {
	Name  string          `json:"name" jsonschema:"the skill's name (lowercase letters, digits, _), as list_skills shows it"`
	Input json.RawMessage `json:"input,omitempty" jsonschema:"the skill's input: an object matching its inputSchema (get_skill or list_skills shows it)"`
}

func callSkill() Tool {
	return define("call_skill", "Call a skill by name with an input object; it answers the skill's output.",
		func(ctx context.Context, env *Env, in callSkillIn) (skillOutput, error) {
			if in.Name == "" {
				return skillOutput{}, domain.Required("name")
			}
			if _, err := skillRunner(env); err != nil {
				return skillOutput{}, err
			}
			sk, err := env.Store.GetSkill(ctx, in.Name)
			if err != nil {
				return skillOutput{}, err
			}
			schema, err := resolveSchema(sk.InputSchema)
			if err != nil {
				return skillOutput{}, err
			}
			input, err := checkSkillInput(sk.Name, schema, in.Input)
			if err != nil {
				return skillOutput{}, err
			}
			return runSkill(ctx, env, sk.Name, sk.Label, input)
		}, asObject("input")).annotated("Call skill", adds)
}
