package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
)

// checkDMAccess keeps direct messages private: a DM stream is read and
// written, and its members listed, only by its two members, whatever tools
// a worker holds or where it sits in the chart.
func checkDMAccess(ctx context.Context, env *Env, stream string) error {
	if !domain.IsDM(stream) {
		return nil
	}
	return env.Store.CheckReads(ctx, env.Caller, stream)
}
