package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type getSkillIn struct {
	Name    string `json:"name" jsonschema:"the skill's name, as list_skills shows it"`
	Version int    `json:"version,omitempty" jsonschema:"the version to read; by default the one serving"`
}

type getSkillOut struct {
	Skill skillView `json:"skill"`
	// Source is the version's build context, examples and build log.
	Source domain.SkillVersion `json:"source"`
}

func getSkill() Tool {
	return define("get_skill", "Read a skill version's source back: its files as built, its examples and its build log.",
		func(ctx context.Context, env *Env, in getSkillIn) (getSkillOut, error) {
			if in.Name == "" {
				return getSkillOut{}, domain.Required("name")
			}
			if in.Version < 0 {
				return getSkillOut{}, domain.Invalid("version", "must be a positive version number")
			}
			sk, err := env.Store.GetSkill(ctx, in.Name)
			if err != nil {
				return getSkillOut{}, err
			}
			v := in.Version
			if v == 0 {
				v = sk.Version
			}
			src, err := env.Store.GetSkillVersion(ctx, sk.Name, v)
			if err != nil {
				return getSkillOut{}, err
			}
			return getSkillOut{Skill: viewOf(sk), Source: src}, nil
		}).annotated("Get skill", readOnly|idempotent)
}
