package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type deleteSkillIn struct {
	Name string `json:"name"`
}

type deleteSkillOut struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func deleteSkill() Tool {
	return define("delete_skill", "Delete a skill and its grants.",
		func(ctx context.Context, env *Env, in deleteSkillIn) (deleteSkillOut, error) {
			if in.Name == "" {
				return deleteSkillOut{}, domain.Required("name")
			}
			runner, err := skillRunner(env)
			if err != nil {
				return deleteSkillOut{}, err
			}
			if err := runner.Delete(ctx, env.Caller, in.Name); err != nil {
				return deleteSkillOut{}, err
			}
			return deleteSkillOut{Name: in.Name, Deleted: true}, nil
		}).annotated("Delete skill", destructive|idempotent)
}
