package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type decideApprovalIn struct {
	ID       string `json:"id" jsonschema:"the approval request (ap-…), as list_approvals shows it"`
	Decision string `json:"decision" jsonschema:"approve runs the call once, as its requester asked it; deny refuses it"`
	Note     string `json:"note,omitempty" jsonschema:"a note to the requester with the decision"`
}

func decideApproval() Tool {
	return define("decide_approval", "Approve or deny a call waiting for approval; approving runs it once, as its requester asked.",
		func(ctx context.Context, env *Env, in decideApprovalIn) (domain.Approval, error) {
			if in.ID == "" {
				return domain.Approval{}, domain.Required("id")
			}
			d := domain.ApprovalDecision(in.Decision)
			if err := d.Validate("decision"); err != nil {
				return domain.Approval{}, err
			}
			a, err := env.Store.DecideApproval(ctx, env.Caller, in.ID, d, in.Note)
			if err != nil || a.State != domain.ApprovalApproved {
				return a, err
			}
			result, runErr := runAsRequester(ctx, env, a)
			var raw json.RawMessage
			errText := ""
			if runErr != nil {
				errText = runErr.Error()
			} else if raw, err = json.Marshal(result); err != nil {
				errText = fmt.Sprintf("encode result: %v", err)
			}
			return env.Store.FinishApproval(ctx, a.ID, raw, errText)
		}, enum("decision", domain.ApprovalDecisions)).annotated("Decide approval", destructive|openWorld)
}

// runAsRequester runs an approved call as the worker that asked, with the
// stored arguments only if they still hash to what was approved, and only
// while that worker is active and holds the grant.
func runAsRequester(ctx context.Context, env *Env, a domain.Approval) (any, error) {
	if domain.ArgsHash(a.Arguments) != a.ArgsHash {
		return nil, fmt.Errorf("the stored arguments do not match the approved hash; not run: %w", domain.ErrConflict)
	}
	w, err := env.Store.GetWorker(ctx, a.WorkerID)
	if err != nil {
		return nil, err
	}
	if !w.Active() {
		return nil, fmt.Errorf("worker %s has been dismissed; not run: %w", a.WorkerID, domain.ErrConflict)
	}
	granted, err := env.Store.LiveTools(ctx, a.WorkerID)
	if err != nil {
		return nil, err
	}
	as := &Env{Store: env.Store, Root: env.Root, Caller: a.WorkerID, Known: env.Known, ActivationID: a.ActivationID, Skills: env.Skills, SkillDefs: env.SkillDefs,
		Logger: env.Logger, approved: &a}
	// What it writes carries the run's label as it was held — readable by
	// the org when what a person approved was to declassify it.
	if a.Kind == domain.ApprovalDeclassify {
		ctx = store.WritingDeclassified(ctx, a.Label)
	} else {
		ctx = store.Writing(ctx, a.Label)
	}
	// The grant is checked again (it may have been revoked since); the
	// gate is not: a person has just passed the call through it.
	o := callApproved(ctx, as, granted, a.Tool, a.Arguments)
	return o.Out, o.Err
}
