package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type askHumanIn struct {
	Person       string `json:"person" jsonschema:"the person to ask: a human worker (w-…), or a position (p-…) for the one person holding it"`
	Question     string `json:"question" jsonschema:"what you ask or tell them, complete on its own: they may read it on their phone"`
	ExpectsReply bool   `json:"expectsReply,omitempty" jsonschema:"true when you wait for an answer: their reply wakes you with this question quoted; false (default) sends a notice"`
	Task         string `json:"task,omitempty" jsonschema:"a spec task you plan (t-…) the question clarifies: the task waits, submit_spec refused, until the answer; needs expectsReply"`
}

type askHumanOut struct {
	Stream string       `json:"stream" jsonschema:"the direct-message stream you share with them, where their answer arrives"`
	Event  domain.Event `json:"event"`
	// Open says the question waits for its answer.
	Open bool `json:"open" jsonschema:"true while the question waits for the person's answer"`
}

func askHuman() Tool {
	return define("ask_human", "Ask a person a question, or tell them something, on their channel: their web inbox and, if they have one, "+
		"their contact channel (email, Slack, Telegram, Discord). With expectsReply their answer arrives on your direct-message stream with them "+
		"and wakes you, quoting the question; do not wait in the run.",
		func(ctx context.Context, env *Env, in askHumanIn) (askHumanOut, error) {
			switch {
			case in.Person == "":
				return askHumanOut{}, domain.Required("person")
			case in.Question == "":
				return askHumanOut{}, domain.Required("question")
			}
			person, err := holder(ctx, env, "person", in.Person)
			if err != nil {
				return askHumanOut{}, err
			}
			ev, err := env.Store.AskHuman(ctx, store.Ask{Asker: env.Caller, Person: person, Text: in.Question, ExpectsReply: in.ExpectsReply,
				CausedBy: env.ActivationID, MaxBody: maxBody(ctx, env), Task: in.Task})
			if err != nil {
				return askHumanOut{}, err
			}
			return askHumanOut{Stream: ev.StreamID, Event: ev, Open: in.ExpectsReply}, nil
		}).annotated("Ask a person", openWorld)
}
