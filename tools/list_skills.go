package tools

import (
	"context"
)

type listSkillsOut struct {
	Skills []skillView `json:"skills"`
}

func listSkills() Tool {
	return define("list_skills", "List every skill with its version, status (ready, stopped — starts on its next call — or failed, with why), image, creator and last use.",
		func(ctx context.Context, env *Env, _ struct{}) (listSkillsOut, error) {
			skills, err := env.Store.ListSkills(ctx)
			if err != nil {
				return listSkillsOut{}, err
			}
			out := listSkillsOut{Skills: []skillView{}}
			for _, sk := range skills {
				out.Skills = append(out.Skills, viewOf(sk))
			}
			return out, nil
		})
}
