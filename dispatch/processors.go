package dispatch

import (
	"context"
	"fmt"
	"sync"

	"github.com/helixml/helix-org/dispatch/processor"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Processors run here, in the server, as subscribers that need no model:
// each step hands the events waiting in the processors' outbox to them
// and appends what they make in the transaction that retires the work
// (store.CompleteWork), before any worker is woken, so a subscriber of an
// output wakes in the same step as the input arrived.
const (
	processorBatch = 256
	// processorBatches bounds one step's processing, so a flood on a
	// processed stream does not hold back waking workers; the rest waits
	// for the next step.
	processorBatches = 8
)

// programs caches compiled processors. A processor never changes; one
// deleted and created again under its id has another CreatedAt.
type programs struct {
	mu sync.Mutex
	m  map[string]*processor.Program
}

func (c *programs) get(p domain.Processor) (*processor.Program, error) {
	key := p.ID + "@" + p.CreatedAt.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if prg, ok := c.m[key]; ok {
		return prg, nil
	}
	prg, err := processor.Compile(p)
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]*processor.Program{}
	}
	c.m[key] = prg
	return prg, nil
}

// runProcessors does the processors' pending work, oldest first.
func (d *Dispatcher) runProcessors(ctx context.Context) error {
	for range processorBatches {
		work, err := d.st.PendingWork(ctx, processorBatch)
		if err != nil {
			return err
		}
		for _, w := range work {
			if err := d.process(ctx, w); err != nil {
				return err
			}
		}
		if len(work) < processorBatch {
			return nil
		}
	}
	return nil
}

// process runs one piece of work. A fault of the processor (its
// expression failed, or what it made is refused) is recorded on the work
// and the processor, and the step goes on; a fault of the database
// leaves the work pending for the next step.
func (d *Dispatcher) process(ctx context.Context, w store.ProcessorWork) error {
	prg, err := d.programs.get(w.Processor)
	if err != nil {
		return d.failWork(ctx, w, err)
	}
	outs, err := prg.Run(processor.Input{Event: w.Input, StreamKind: w.StreamKind})
	if err != nil {
		return d.failWork(ctx, w, fmt.Errorf("event %s: %w", w.Input.ID, err))
	}
	if err := d.st.CompleteWork(ctx, w, outs); err != nil {
		if store.IsWorkFault(err) {
			return d.failWork(ctx, w, err)
		}
		return err
	}
	return nil
}

func (d *Dispatcher) failWork(ctx context.Context, w store.ProcessorWork, reason error) error {
	d.log.Warn("processor failed on an event", "processor", w.Processor.ID, "event", w.Input.ID, "err", reason)
	return d.st.FailWork(ctx, w, reason)
}
