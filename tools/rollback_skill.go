package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type rollbackSkillIn struct {
	Name string `json:"name" jsonschema:"the skill's name, as list_skills shows it"`
}

func rollbackSkill() Tool {
	return define("rollback_skill", "Serve a skill's previous working version again.",
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
		}).annotated("Roll back skill", destructive)
}
