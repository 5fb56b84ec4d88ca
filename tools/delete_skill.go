package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type deleteSkillIn struct {
	Name string `json:"name" jsonschema:"the skill's name, as list_skills shows it"`
}

type deleteSkillOut struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func deleteSkill() Tool {
	return define("delete_skill", "Delete a skill: its container, its images and every grant of its tool.",
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
