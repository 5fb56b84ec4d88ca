package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

type deleteProcessorIn struct {
	ID string `json:"id" jsonschema:"the processor to delete (proc-…)"`
}

func deleteProcessor() Tool {
	return define("delete_processor", "Delete a processor: it stops processing its input, and the events it has not processed yet are left unprocessed. What it already wrote stays on its outputs.",
		func(ctx context.Context, env *Env, in deleteProcessorIn) (domain.Processor, error) {
			if in.ID == "" {
				return domain.Processor{}, domain.Required("id")
			}
			return env.Store.DeleteProcessor(ctx, env.Caller, in.ID)
		}).annotated("Delete processor", destructive)
}
