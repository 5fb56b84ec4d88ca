package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// checkDMAccess keeps direct messages private: a DM stream is read and
// written only by its two members, whatever tools a worker holds.
func checkDMAccess(ctx context.Context, env *Env, stream string) error {
	if !strings.HasPrefix(stream, domain.DMStreamPrefix) {
		return nil
	}
	subs, err := env.Store.StreamMembers(ctx, stream)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(subs, func(s domain.Subscription) bool { return s.WorkerID == env.Caller }) {
		return domain.Invalid("stream", "%s is a direct-message stream; only its two members can read or write it", stream)
	}
	return nil
}
