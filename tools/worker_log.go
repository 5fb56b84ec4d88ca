package tools

import (
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type workerLogIn struct {
	Worker string  `json:"worker" jsonschema:"the AI worker whose log to read (w-…): you, or one below you"`
	Since  int64   `json:"since,omitempty" jsonschema:"a cursor: only entries after this seq, as the last read's cursor gives it; 0 from the start"`
	Limit  int     `json:"limit,omitempty" jsonschema:"at most this many entries, oldest first; 1 to 500, by default 500"`
	Wait   float64 `json:"wait,omitempty" jsonschema:"seconds to wait for an entry when there is none yet, up to 60; 0 answers at once"`
}

func workerLog() Tool {
	return define("worker_log", "Read an AI worker's activation log: run starts and ends, messages, tool calls; optionally waiting for more.",
		func(ctx context.Context, env *Env, in workerLogIn) (readEventsOut, error) {
			if in.Worker == "" {
				return readEventsOut{}, domain.Required("worker")
			}
			if in.Limit < 0 || in.Limit > store.MaxReadLimit {
				return readEventsOut{}, domain.Invalid("limit", "must be between 1 and %d", store.MaxReadLimit)
			}
			if in.Wait < 0 || in.Wait > MaxWait {
				return readEventsOut{}, domain.Invalid("wait", "must be between 0 and %d seconds", MaxWait)
			}
			w, err := env.Store.GetWorker(ctx, in.Worker)
			if err != nil {
				return readEventsOut{}, err
			}
			if w.Kind != domain.WorkerAI {
				return readEventsOut{}, domain.Invalid("worker", "%s is a %s worker; only AI workers have an activation log", w.ID, w.Kind)
			}
			if err := env.Store.CheckReads(ctx, env.Caller, domain.ActivationStreamPrefix+w.ID); err != nil {
				return readEventsOut{}, err
			}
			q := store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + w.ID}, Since: in.Since, Limit: in.Limit}
			evs, err := waitForEvents(ctx, env, q, time.Duration(in.Wait*float64(time.Second)))
			if err == nil {
				err = env.sawEvents(ctx, evs)
			}
			out := readEventsOut{Events: orEmpty(evs), Cursor: in.Since}
			if len(evs) > 0 {
				out.Cursor = evs[len(evs)-1].Seq
			}
			return out, err
		}).answeredBy(answerEvents).annotated("Worker log", readOnly|idempotent)
}
