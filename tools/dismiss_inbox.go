package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// maxDismiss bounds one dismiss_inbox call.
const maxDismiss = 100

type dismissInboxIn struct {
	IDs []string `json:"ids" jsonschema:"the inbox items to dismiss, 1 to 100: messages and notices by event id (e-…), failed runs by activation id (a-…)"`
}

type dismissInboxOut struct {
	Dismissed []string `json:"dismissed" jsonschema:"the items your inbox no longer lists"`
}

// dismissInbox takes items off the caller's inbox once dealt with (a
// decided approval, a failed run looked into). Nothing is deleted: the
// event stays on its stream and the run in the log.
func dismissInbox() Tool {
	return define("dismiss_inbox", "Dismiss items from your inbox once dealt with: messages and notices (e-…) and failed runs (a-…). They stay on their streams and logs; only your inbox stops listing them.",
		func(ctx context.Context, env *Env, in dismissInboxIn) (dismissInboxOut, error) {
			ids := dedupe(in.IDs)
			switch {
			case len(ids) == 0:
				return dismissInboxOut{}, domain.Required("ids")
			case len(ids) > maxDismiss:
				return dismissInboxOut{}, domain.Invalid("ids", "at most %d items at once; got %d", maxDismiss, len(ids))
			}
			for i, id := range ids {
				if err := mayDismiss(ctx, env, fmt.Sprintf("ids[%d]", i), id); err != nil {
					return dismissInboxOut{}, err
				}
			}
			if err := env.Store.DismissInboxItems(ctx, env.Caller, ids); err != nil {
				return dismissInboxOut{}, err
			}
			return dismissInboxOut{Dismissed: ids}, nil
		}).annotated("Dismiss inbox items", idempotent)
}

// mayDismiss checks that id, given as field, is an event or a run the
// caller may read.
func mayDismiss(ctx context.Context, env *Env, field, id string) error {
	if strings.HasPrefix(id, domain.PrefixEvent) {
		ev, err := env.Store.GetEvent(ctx, id)
		if err != nil {
			return err
		}
		return env.Store.CheckReads(ctx, env.Caller, ev.StreamID)
	}
	act, err := env.Store.GetActivation(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Invalid(field, "%q is no inbox item: name a message or notice by its event id (e-…) or a failed run by its activation id (a-…)", id)
	}
	if err != nil {
		return err
	}
	return env.Store.CheckReads(ctx, env.Caller, domain.ActivationStreamPrefix+act.WorkerID)
}
