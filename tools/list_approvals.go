package tools

import (
	"context"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type listApprovalsIn struct {
	State string `json:"state,omitempty" jsonschema:"only requests in this state; by default pending"`
}

type listApprovalsOut struct {
	Approvals []domain.Approval `json:"approvals"`
}

func listApprovals() Tool {
	return define("list_approvals", "List approval requests you are to decide or made (pending by default).",
		func(ctx context.Context, env *Env, in listApprovalsIn) (listApprovalsOut, error) {
			state := domain.ApprovalState(in.State)
			if state != "" {
				if err := state.Validate("state"); err != nil {
					return listApprovalsOut{}, err
				}
			}
			as, err := env.Store.ListApprovals(ctx, env.Caller, store.ApprovalFilter{State: state})
			if err != nil {
				return listApprovalsOut{}, err
			}
			if as == nil {
				as = []domain.Approval{}
			}
			return listApprovalsOut{Approvals: as}, nil
		}, enum("state", domain.ApprovalStates)).annotated("List approvals", readOnly|idempotent)
}
