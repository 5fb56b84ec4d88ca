package tools

import (
	"context"
	"time"
)

type learnIn struct {
	Worker string `json:"worker"`
}

type questionOut struct {
	ID         string    `json:"id"`
	Activation string    `json:"activation"`
	Error      string    `json:"error"`
	Situation  string    `json:"situation"`
	Used       []string  `json:"used,omitempty"`
	Notice     string    `json:"notice" jsonschema:"the inbox event that asks it"`
	AskedAt    time.Time `json:"askedAt"`
}

type learnOut struct {
	Questions []questionOut `json:"questions"`
}

func learn() Tool {
	return define("learn", "Ask yourself about a Worker's failed runs.",
		func(ctx context.Context, env *Env, in learnIn) (learnOut, error) {
			qs, err := env.Store.Learn(ctx, env.Caller, in.Worker)
			if err != nil {
				return learnOut{}, err
			}
			out := learnOut{Questions: []questionOut{}}
			for _, q := range qs {
				out.Questions = append(out.Questions, questionOut{ID: q.ID, Activation: q.Activation, Error: q.Error, Situation: q.Situation,
					Used: q.Used, Notice: q.Notice, AskedAt: q.AskedAt})
			}
			return out, nil
		})
}
