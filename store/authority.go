package store

import (
	"context"
	"errors"
	"slices"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// Authority is the org chart: a worker acts on another only when that
// worker's position is below its own (domain.Chart holds the rules). The
// store's mutations check it inside their own write transaction, so a
// concurrent change to the chart cannot slip between check and write; the
// exported checks below are for tools that only read.
//
// An empty actor is the operator (the CLI with the database file) or the
// system itself, which the chart does not bind.

// CheckManages returns nil when actor may act on target, else an error
// wrapping domain.ErrForbidden that names the rule.
func (s *Store) CheckManages(ctx context.Context, actor, target string) error {
	return newAuthz(s.read(ctx)).manages(actor, target)
}

// CheckReads returns nil when reader may read stream by the reading rules:
// s-org only the owner; an activation log the owner, its worker and the
// workers above it; a DM its two members; a contact stream its person;
// any other stream everyone.
// Subscription is not considered; ReadableStreams adds it.
func (s *Store) CheckReads(ctx context.Context, reader, stream string) error {
	return newAuthz(s.read(ctx)).reads(reader, stream)
}

// ReadableStreams resolves the streams reader asks to read. With none
// named it is every stream reader follows that the reading rules allow
// (a subscription made before the rules is skipped, not an error); each
// named stream must exist, be followed by reader and pass the rules. An
// archived stream takes no new member, so its history is read without
// following it, by whom the rules allow; a private one still only by its
// members, its only readers.
func (s *Store) ReadableStreams(ctx context.Context, reader string, want []string) ([]string, error) {
	subscribed, err := s.SubscribedStreams(ctx, reader)
	if err != nil {
		return nil, err
	}
	a := newAuthz(s.read(ctx))
	if len(want) == 0 {
		out := subscribed[:0:0]
		for _, id := range subscribed {
			if err := a.reads(reader, id); err == nil {
				out = append(out, id)
			} else if !isForbidden(err) {
				return nil, err
			}
		}
		return out, nil
	}
	streams := map[string]domain.Stream{}
	for _, id := range want {
		st, err := s.GetStream(ctx, id)
		if err != nil {
			return nil, err
		}
		streams[id] = st
	}
	for _, id := range want {
		if err := a.reads(reader, id); err != nil {
			return nil, err
		}
		switch st := streams[id]; {
		case slices.Contains(subscribed, id), st.ArchivedAt != nil && !st.Private:
		case st.ArchivedAt != nil:
			return nil, domain.Forbidden("%s is private and archived: only its members read it, and it takes no new one", id)
		default:
			return nil, domain.Forbidden("%s is not subscribed to %s; subscribe to it first (subscribe {\"stream\": %q})", reader, id, id)
		}
	}
	return want, nil
}

// authz answers authority questions over one handle (a transaction or a
// read), loading the chart and each seat at most once.
type authz struct {
	tx    *gorm.DB
	chart domain.Chart
	seats map[string]domain.Seat
}

func newAuthz(tx *gorm.DB) *authz { return &authz{tx: tx, seats: map[string]domain.Seat{}} }

func (a *authz) seat(worker string) (domain.Seat, error) {
	if st, ok := a.seats[worker]; ok {
		return st, nil
	}
	var w workerRow
	if err := a.tx.Select("id", "position_id").Where("id = ?", worker).Take(&w).Error; err != nil {
		return domain.Seat{}, notFoundOr(err, "worker", worker)
	}
	st := domain.Seat{Worker: w.ID, Position: w.PositionID}
	a.seats[worker] = st
	return st, nil
}

func (a *authz) loadChart() (domain.Chart, error) {
	if a.chart != nil {
		return a.chart, nil
	}
	var rows []positionRow
	if err := a.tx.Select("id", "reports_to").Find(&rows).Error; err != nil {
		return nil, err
	}
	a.chart = domain.NewChart(mapRows(rows, positionRow.toDomain))
	return a.chart, nil
}

// both loads two seats and the chart, for a rule over actor and target.
func (a *authz) both(actor, target string) (domain.Chart, domain.Seat, domain.Seat, error) {
	as, err := a.seat(actor)
	if err != nil {
		return nil, as, domain.Seat{}, err
	}
	ts, err := a.seat(target)
	if err != nil {
		return nil, as, ts, err
	}
	c, err := a.loadChart()
	return c, as, ts, err
}

func (a *authz) manages(actor, target string) error {
	if actor == "" || actor == domain.OwnerWorker {
		return nil
	}
	c, as, ts, err := a.both(actor, target)
	if err != nil {
		return err
	}
	return c.CheckManages(as, ts)
}

// places says whether actor may hire into or create pos.
func (a *authz) places(actor, pos string) error {
	if actor == "" {
		if pos == domain.OwnerPosition {
			return domain.Forbidden("%s is the owner's seat; only %s holds it", domain.OwnerPosition, domain.OwnerWorker)
		}
		return nil
	}
	as, err := a.seat(actor)
	if err != nil {
		return err
	}
	c, err := a.loadChart()
	if err != nil {
		return err
	}
	return c.CheckPlaces(as, pos)
}

func (a *authz) reads(reader, stream string) error {
	kind, worker := domain.StreamKindOf(stream)
	// The operator reads everything; the owner everything but other
	// workers' DMs.
	personal := kind == domain.StreamDM || kind == domain.StreamContact
	if reader == "" || (reader == domain.OwnerWorker && !personal) {
		return nil
	}
	switch {
	case kind == domain.StreamContact:
		return domain.CheckReadsContact(reader, stream)
	case stream == domain.StreamOrg:
		return domain.CheckReadsOrg(reader)
	case kind == domain.StreamActivations, kind == domain.StreamInbox:
		// An inbox reads like the worker's activation log: itself, the
		// owner and the workers above it.
		c, rs, ws, err := a.both(reader, worker)
		if err != nil {
			return err
		}
		return c.CheckReadsLog(rs, ws)
	case kind == domain.StreamDM:
		var st streamRow
		if err := a.tx.Select("id", "created_by").Where("id = ?", stream).Take(&st).Error; err != nil {
			return notFoundOr(err, "stream", stream)
		}
		return domain.CheckReadsDM(reader, stream, st.CreatedBy)
	}
	return nil
}

func isForbidden(err error) bool { return errors.Is(err, domain.ErrForbidden) }
