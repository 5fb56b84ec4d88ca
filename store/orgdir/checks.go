package orgdir

import (
	"fmt"
	"slices"
	"time"

	"github.com/helixml/helix-org/domain"
)

// An export can come from anyone, and the Importer writes records as they
// are, bypassing the rules the tools hold changes to. checkOrg holds what
// was read to those rules, so an import gives nobody more than the org it
// describes could have given itself: every grant as grant_tool would
// have made it, and an owner still in office.

// workerSeen is a worker read from the export, with its file.
type workerSeen struct {
	file string
	w    domain.Worker
}

func (in *importer) checkOrg(now time.Time) error {
	if o, ok := in.workers[domain.OwnerWorker]; ok && o.w.DismissedAt != nil {
		return fmt.Errorf("%s: %s is dismissed; an org's owner cannot be (it is the operator's way in)", o.file, domain.OwnerWorker)
	}
	chart := domain.NewChart(in.positions)
	held := map[[2]string]domain.Grant{}
	for _, g := range in.grants {
		held[[2]string{g.WorkerID, g.Tool}] = g
	}
	for _, g := range in.grants {
		by := g.GrantedBy
		if by == "" {
			by = "the operator"
		}
		if err := in.checkGrant(chart, held, now, g); err != nil {
			return fmt.Errorf("grants.yaml: the grant of %s to %s (granted by %s): %w", g.Tool, g.WorkerID, by, err)
		}
	}
	return nil
}

// checkGrant applies grant_tool's rules to one grant: a known tool; given
// by a worker above the holder (or the operator, to the owner only), who
// holds it too, for at least as long, and waits for approval at least as
// often. Expired grants give nothing and are kept as history.
func (in *importer) checkGrant(chart domain.Chart, held map[[2]string]domain.Grant, now time.Time, g domain.Grant) error {
	creator, isSkill := in.skills[g.Tool]
	if !isSkill && !slices.Contains(in.tools, g.Tool) {
		return domain.Invalid("tool", "unknown tool %q (valid: the built-in tools and skill_<name> of the export's skills)", g.Tool)
	}
	if !g.Live(now) {
		return nil
	}
	switch {
	case isSkill && g.GrantedBy == creator && (g.WorkerID == creator || g.WorkerID == domain.OwnerWorker):
		return nil // create_skill gives a new skill's tool to its creator and the owner
	case g.GrantedBy == "" && g.WorkerID == domain.OwnerWorker:
		return nil // bootstrap
	case g.GrantedBy == "":
		return domain.Forbidden("only %s's grants come from the operator; name the worker who granted it", domain.OwnerWorker)
	case g.GrantedBy == g.WorkerID:
		return domain.Forbidden("%s cannot grant to itself; a worker above it can", g.WorkerID)
	}
	granter, ok := in.workers[g.GrantedBy]
	if !ok {
		return fmt.Errorf("granted by %q, who is not among the export's workers: %w", g.GrantedBy, domain.ErrNotFound)
	}
	holder := in.workers[g.WorkerID] // the store checks the holder exists
	err := chart.CheckManages(domain.Seat{Worker: granter.w.ID, Position: granter.w.PositionID}, domain.Seat{Worker: g.WorkerID, Position: holder.w.PositionID})
	if err != nil {
		return err
	}
	own, ok := held[[2]string{g.GrantedBy, g.Tool}]
	switch {
	case !ok || !own.Live(now):
		return domain.Forbidden("%s cannot grant %q because it does not hold it", g.GrantedBy, g.Tool)
	case own.ExpiresAt != nil && (g.ExpiresAt == nil || g.ExpiresAt.After(*own.ExpiresAt)):
		return domain.Forbidden("it ends after %s's own grant of %q (%s)", g.GrantedBy, g.Tool, stamp(*own.ExpiresAt))
	case own.Approval == domain.ApprovalRequired && g.Approval != domain.ApprovalRequired:
		return domain.Forbidden("%s's own grant of %q waits for approval, so this one must too (approval: %s)", g.GrantedBy, g.Tool, domain.ApprovalRequired)
	}
	return nil
}
