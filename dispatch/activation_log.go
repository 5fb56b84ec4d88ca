package dispatch

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// AppendActivationLog adds one entry to a running activation's log, in the
// same form as the dispatcher's own entries. Tools use it to narrate slow
// steps (a skill build, say) on the log of the run that called them.
func AppendActivationLog(ctx context.Context, st *store.Store, worker, activation string, e domain.LogEntry) error {
	_, err := st.Append(ctx, logEvent(worker, activation, e), store.AppendOptions{})
	return err
}
