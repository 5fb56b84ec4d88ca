package tools

import (
	"context"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// MaxWait caps a long-poll so a forgotten client cannot hold a request forever.
const MaxWait = 60

type readEventsIn struct {
	Streams []string `json:"streams,omitempty" jsonschema:"the streams to read (s-…), each one you follow or an archived one; by default every one you follow"`
	Since   int64    `json:"since,omitempty" jsonschema:"a cursor: only events after this seq, as the last read's cursor gives it; 0 from the start"`
	Limit   int      `json:"limit,omitempty" jsonschema:"at most this many events, oldest first; 1 to 500, by default 500"`
	Wait    float64  `json:"wait,omitempty" jsonschema:"seconds to wait for an event when there is none yet, up to 60; 0 answers at once"`
}

type readEventsOut struct {
	Events []domain.Event `json:"events"`
	// Cursor is the seq of the last event returned, or the since given.
	Cursor int64 `json:"cursor" jsonschema:"pass as since to read what comes next"`
}

func readEvents() Tool {
	return define("read_events", "Read events (messages) on streams you follow after a cursor, oldest first, optionally waiting for new ones.",
		func(ctx context.Context, env *Env, in readEventsIn) (readEventsOut, error) {
			if in.Wait < 0 || in.Wait > MaxWait {
				return readEventsOut{}, domain.Invalid("wait", "must be between 0 and %d seconds", MaxWait)
			}
			if in.Limit < 0 || in.Limit > store.MaxReadLimit {
				return readEventsOut{}, domain.Invalid("limit", "must be between 1 and %d", store.MaxReadLimit)
			}
			streams, err := streamsToRead(ctx, env, in.Streams)
			if err != nil {
				return readEventsOut{}, err
			}
			evs, err := waitForEvents(ctx, env, store.EventQuery{StreamIDs: streams, Since: in.Since, Limit: in.Limit},
				time.Duration(in.Wait*float64(time.Second)))
			if err == nil {
				err = env.sawEvents(ctx, evs)
			}
			out := readEventsOut{Events: orEmpty(evs), Cursor: in.Since}
			if len(evs) > 0 {
				out.Cursor = evs[len(evs)-1].Seq
			}
			return out, err
		}).answeredBy(answerEvents).annotated("Read events", readOnly|idempotent).inCore(1)
}

// streamsToRead is least privilege: a worker reads only streams it
// follows, and only those the reading rules let it follow.
func streamsToRead(ctx context.Context, env *Env, ids []string) ([]string, error) {
	return env.Store.ReadableStreams(ctx, env.Caller, ids)
}

// waitForEvents reads, and if nothing is there waits for the next commit
// and reads again, until something arrives, the wait runs out or the org
// stops serving.
func waitForEvents(ctx context.Context, env *Env, q store.EventQuery, wait time.Duration) ([]domain.Event, error) {
	st := env.Store
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		changed := st.Changed()
		evs, err := st.ReadEvents(ctx, q)
		if err != nil || len(evs) > 0 || wait <= 0 {
			return evs, err
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		case <-env.Draining:
			return nil, nil
		}
	}
}
