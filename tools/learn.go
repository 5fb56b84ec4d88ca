package tools

import (
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
)

type learnIn struct {
	Worker string `json:"worker,omitempty" jsonschema:"a worker below you (w-…) whose failed runs to ask about; or give task"`
	Task   string `json:"task,omitempty" jsonschema:"a spec task you review (t-…) whose blocked or retried items to ask about; or give worker"`
}

type questionOut struct {
	ID         string    `json:"id"`
	Activation string    `json:"activation"`
	Error      string    `json:"error"`
	Situation  string    `json:"situation"`
	Used       []string  `json:"used,omitempty"`
	Notice     string    `json:"notice" jsonschema:"the inbox event that asks it"`
	AskedAt    time.Time `json:"askedAt"`
	Task       string    `json:"task,omitempty"`
	Item       int       `json:"item,omitempty"`
}

type learnOut struct {
	Questions []questionOut `json:"questions"`
}

func learn() Tool {
	return define("learn", "Ask yourself, in your inbox, about each failed run of a worker below you or each troubled item of a spec task you review.",
		func(ctx context.Context, env *Env, in learnIn) (learnOut, error) {
			var qs []domain.LearnQuestion
			var err error
			switch {
			case (in.Worker == "") == (in.Task == ""):
				return learnOut{}, domain.Invalid("worker", "name a worker or a task, not both")
			case in.Task != "":
				qs, err = env.Store.LearnTask(ctx, env.Caller, in.Task)
			default:
				qs, err = env.Store.Learn(ctx, env.Caller, in.Worker)
			}
			if err != nil {
				return learnOut{}, err
			}
			out := learnOut{Questions: []questionOut{}}
			for _, q := range qs {
				out.Questions = append(out.Questions, questionOut{ID: q.ID, Activation: q.Activation, Error: q.Error, Situation: q.Situation,
					Used: q.Used, Notice: q.Notice, AskedAt: q.AskedAt, Task: q.Task, Item: q.Item})
			}
			return out, nil
		}).annotated("Learn from failures", idempotent)
}
