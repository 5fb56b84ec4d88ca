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
	return define("list_skills", "List every skill with its serving version, status (ready, stopped — starts on its next call — or failed, with why), image, creator, last use, and every version built: ok, failed (why) or rolled_back.",
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
		})
}
