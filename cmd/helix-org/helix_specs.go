package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/helixml/helix-org/agent/helix"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// watchHelixSpecs pushes each edit of a role, position or worker that
// s-org records to the helix-specs branch of every worker on Helix it
// touches, as it is made. Runs push them too; this only makes an edit
// reach Helix before the worker's next run.
func watchHelixSpecs(ctx context.Context, st *store.Store, hx *helix.Host, log *slog.Logger) {
	cursor, err := st.LastSeq(ctx)
	if err != nil {
		log.Error("helix runtime: read where s-org ends; role edits reach helix-specs at each worker's next run", "err", err)
		return
	}
	for {
		changed, settings := st.Changed(), st.SettingsChanged()
		var idle bool
		if cursor, idle = pushHelixEdits(ctx, st, hx, log, cursor); idle {
			// Without Helix only a setting can give it work: other
			// writes need not wake it.
			changed = settings
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// pushHelixEdits pushes what s-org's events after cursor changed and
// returns the new cursor; idle when no Helix is set.
func pushHelixEdits(ctx context.Context, st *store.Store, hx *helix.Host, log *slog.Logger, cursor int64) (_ int64, idle bool) {
	if url, _ := st.SettingOr(ctx, helix.URLSetting); url == "" {
		// No Helix, no workers on it: nothing to read until there is.
		return cursor, true
	}
	targets := map[string]bool{}
	for {
		evs, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}, Since: cursor, Limit: store.MaxReadLimit})
		if err != nil {
			log.Error("helix runtime: read s-org for role edits", "err", err)
			break
		}
		for _, ev := range evs {
			cursor = ev.Seq
			if f := strings.Fields(ev.Message.Subject); len(f) == 2 {
				targets[f[1]] = true
			}
		}
		if len(evs) < store.MaxReadLimit {
			break
		}
	}
	for target := range targets {
		for _, w := range touched(ctx, st, target) {
			if err := pushWorkerSpecs(ctx, st, hx, w); err != nil {
				log.Warn("helix runtime: push a role edit to helix-specs; the worker's next run pushes it", "worker", w.ID, "err", err)
			}
		}
	}
	return cursor, false
}

// touched is the active AI workers whose role or identity an edit of
// target (a role, position or worker) may have changed.
func touched(ctx context.Context, st *store.Store, target string) []domain.Worker {
	ws, err := st.ListWorkers(ctx, store.WorkerFilter{Kind: domain.WorkerAI})
	if err != nil {
		return nil
	}
	var out []domain.Worker
	for _, w := range ws {
		switch {
		case w.ID == target, w.PositionID == target:
			out = append(out, w)
		case strings.HasPrefix(target, domain.PrefixRole):
			if p, err := st.GetPosition(ctx, w.PositionID); err == nil && p.RoleID == target {
				out = append(out, w)
			}
		}
	}
	return out
}

func pushWorkerSpecs(ctx context.Context, st *store.Store, hx *helix.Host, w domain.Worker) error {
	pos, err := st.GetPosition(ctx, w.PositionID)
	if err != nil {
		return err
	}
	role, err := st.GetRole(ctx, pos.RoleID)
	if err != nil {
		return err
	}
	_, err = hx.PushSpecs(ctx, w.ID, dispatch.RoleFiles(w, pos, role))
	return err
}
