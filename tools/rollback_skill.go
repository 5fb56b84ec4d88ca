package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type rollbackSkillIn struct {
	Name string `json:"name" jsonschema:"the skill to roll back"`
}

func rollbackSkill() Tool {
	return define("rollback_skill", "Put a skill's previous working version back in one call: it is started (its image is kept, or rebuilt from its source), health-checked and checked against its examples, then serves instead of the current one, which is never a rollback target again.",
		func(ctx context.Context, env *Env, in rollbackSkillIn) (skillView, error) {
			if in.Name == "" {
				return skillView{}, domain.Required("name")
			}
			runner, err := skillRunner(env)
			if err != nil {
				return skillView{}, err
			}
			sk, err := runner.Rollback(ctx, env.Caller, in.Name, narrator(ctx, env))
			if err != nil {
				return skillView{}, err
			}
			return viewOf(sk), nil
		})
}
