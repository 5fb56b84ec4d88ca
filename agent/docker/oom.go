package docker

import (
	"context"
	"sync"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/helixml/helix-org/domain"
)

// oomWatch tells a run's log, once, that a process in its container hit
// the memory cap: as the engine reports it, while the agent may well live
// on (the kernel kills the biggest process, often a tool); or, for an oom
// the watch missed, from the container's state after it exits. The two
// race: the engine may record the oom only after the exit.
type oomWatch struct {
	log  func(domain.LogEntry)
	once sync.Once
	// stop ends the watch and returns once it has logged all it will.
	stop func()
}

// watchOOM watches container id for ooms. Call it before the container
// starts; the watch is not needed for the run to work, so one the engine
// refuses leaves only the check after the exit.
func (r *Runtime) watchOOM(ctx context.Context, id string, log func(domain.LogEntry)) *oomWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &oomWatch{log: log}
	f := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)), filters.Arg("container", id), filters.Arg("event", string(events.ActionOOM)))
	// Since the epoch: the engine subscribes only after it answers, and
	// replays an oom that came in between from its recent history. The
	// container is new, so nothing older matches.
	msgs, errs := r.Engine.cli.Events(ctx, events.ListOptions{Since: "0", Filters: f})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-msgs:
				w.note()
			case err := <-errs:
				if ctx.Err() == nil {
					r.Engine.log.Debug("watch container for oom; only its state after the exit will tell", "container", id, "err", err)
				}
				return
			}
		}
	}()
	w.stop = func() { cancel(); <-done }
	return w
}

func (w *oomWatch) note() {
	w.once.Do(func() {
		w.log(domain.LogEntry{Kind: domain.LogError, Text: "a process in the container hit the memory cap and was OOM-killed"})
	})
}

// end stops the watch and notes the oom the container's state shows, if
// the watch did not.
func (w *oomWatch) end(oomKilled bool) {
	w.stop()
	if oomKilled {
		w.note()
	}
}
