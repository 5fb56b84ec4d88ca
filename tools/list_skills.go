package tools

import (
	"context"
)

type listSkillsOut struct {
	Skills []listedSkill `json:"skills"`
}

type listedSkill struct {
	skillView
	// Versions are every build, oldest first, with what became of each.
	Versions []versionView `json:"versions"`
}

func listSkills() Tool {
	return define("list_skills", "List skills: serving version, status, creator, last use and every version built.",
		func(ctx context.Context, env *Env, _ struct{}) (listSkillsOut, error) {
			skills, err := env.Store.ListSkills(ctx)
			if err != nil {
				return listSkillsOut{}, err
			}
			out := listSkillsOut{Skills: []listedSkill{}}
			for _, sk := range skills {
				vs, err := env.Store.SkillVersions(ctx, sk.Name)
				if err != nil {
					return listSkillsOut{}, err
				}
				out.Skills = append(out.Skills, listedSkill{skillView: viewOf(sk), Versions: versionsOf(sk, vs)})
			}
			return out, nil
		}).annotated("List skills", readOnly|idempotent)
}
