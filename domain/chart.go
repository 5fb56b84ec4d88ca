package domain

import (
	"fmt"
	"slices"
	"strings"
)

// The owner: one worker in one position at the root of the chart, created
// (and repaired) by bootstrap.
const (
	OwnerRole     = "r-owner"
	OwnerPosition = "p-owner"
	OwnerWorker   = "w-owner"
)

// ruleError is a refusal by an authority rule. Its text names the rule so a
// caller (often an AI agent) knows why and who could do it instead.
type ruleError struct{ Msg string }

func (e *ruleError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, ErrForbidden) match every ruleError.
func (e *ruleError) Unwrap() error { return ErrForbidden }

// Forbidden builds a ruleError with a formatted message.
func Forbidden(format string, args ...any) error {
	return &ruleError{Msg: fmt.Sprintf(format, args...)}
}

// Seat is a worker in its position: who acts, or who is acted on.
type Seat struct {
	Worker   string
	Position string
}

func (s Seat) String() string { return s.Worker + " (" + s.Position + ")" }

// Chart is the reports-to tree of positions: each position id maps to the
// position it reports to. A position that reports to no one (or is not in
// the map) reports to OwnerPosition, the root; the root reports to no one
// whatever the map says.
type Chart map[string]string

// NewChart builds the chart of the given positions.
func NewChart(ps []Position) Chart {
	c := make(Chart, len(ps))
	for _, p := range ps {
		c[p.ID] = p.ReportsTo
	}
	return c
}

// Managers returns the positions above pos, nearest first, ending with
// OwnerPosition (none for the root itself). A cycle in the data is an error
// naming it, so a corrupt chart refuses instead of looping.
func (c Chart) Managers(pos string) ([]string, error) {
	var out []string
	path := []string{pos}
	for cur := pos; cur != OwnerPosition; {
		next := c[cur]
		if next == "" {
			next = OwnerPosition
		}
		if i := slices.Index(path, next); i >= 0 {
			return nil, fmt.Errorf("%w: positions report to each other in a cycle: %s", ErrConflict,
				strings.Join(append(path[i:], next), " → "))
		}
		path = append(path, next)
		out = append(out, next)
		cur = next
	}
	return out, nil
}

// Below reports whether pos is strictly below mgr.
func (c Chart) Below(pos, mgr string) (bool, error) {
	if pos == mgr {
		return false, nil
	}
	ms, err := c.Managers(pos)
	return slices.Contains(ms, mgr), err
}

// CheckReportsTo refuses making pos report to reportsTo when that would
// close a cycle, naming the cycle. The root reports to no one.
func (c Chart) CheckReportsTo(pos, reportsTo string) error {
	switch {
	case reportsTo == "":
		return nil
	case pos == OwnerPosition:
		return Invalid("reportsTo", "%s is the root of the chart; it reports to no one", OwnerPosition)
	case pos == reportsTo:
		return Invalid("reportsTo", "a position cannot report to itself")
	}
	ms, err := c.Managers(reportsTo)
	if err != nil {
		return err
	}
	if i := slices.Index(ms, pos); i >= 0 {
		cycle := append([]string{pos, reportsTo}, ms[:i+1]...)
		return Invalid("reportsTo", "%s reporting to %s would close a cycle: %s", pos, reportsTo, strings.Join(cycle, " → "))
	}
	return nil
}

// CheckManages says whether actor may act on target — dismiss it, grant to
// or revoke from it, edit its identity, (un)subscribe it: only when
// target's position is strictly below actor's. The owner may act on
// everyone; nobody but the owner acts on the owner. Callers decide the
// self-service cases (actor == target) before asking.
func (c Chart) CheckManages(actor, target Seat) error {
	switch {
	case actor.Worker == OwnerWorker:
		return nil
	case target.Worker == OwnerWorker:
		return Forbidden("%s may only manage workers below %s; %s is not", actor.Worker, actor.Position, OwnerWorker)
	}
	below, err := c.Below(target.Position, actor.Position)
	if err != nil {
		return err
	}
	if !below {
		return Forbidden("%s may only manage workers below %s; %s is not", actor.Worker, actor.Position, target)
	}
	return nil
}

// CheckPlaces says whether actor may hire into pos, or create pos: only
// when pos is strictly below actor's position. That holds for the owner
// too, so nobody is hired into OwnerPosition: there is one owner.
func (c Chart) CheckPlaces(actor Seat, pos string) error {
	if actor.Worker == OwnerWorker {
		if pos == OwnerPosition {
			return Forbidden("%s is the owner's seat; only %s holds it", OwnerPosition, OwnerWorker)
		}
		return nil
	}
	below, err := c.Below(pos, actor.Position)
	if err != nil {
		return err
	}
	if !below {
		return Forbidden("%s may only hire into and create positions below %s; %s is not", actor.Worker, actor.Position, pos)
	}
	return nil
}

// CheckEditsRole says whether actor may edit a role held by the positions
// holders: only when every one of them is strictly below actor's position.
// A role no position holds may be edited by its creator (creator, "" when
// unknown) and the owner.
func (c Chart) CheckEditsRole(actor Seat, role string, holders []string, creator string) error {
	if actor.Worker == OwnerWorker {
		return nil
	}
	if len(holders) == 0 {
		if creator != "" && creator == actor.Worker {
			return nil
		}
		return Forbidden("%s is held by no position; only its creator or %s may edit it", role, OwnerWorker)
	}
	for _, h := range holders {
		below, err := c.Below(h, actor.Position)
		if err != nil {
			return err
		}
		if !below {
			return Forbidden("%s may only edit roles whose every position is below %s; %s is held by %s", actor.Worker, actor.Position, role, h)
		}
	}
	return nil
}

// CheckReadsLog says whether reader may read the activation log of w: the
// owner, w itself, and workers above w.
func (c Chart) CheckReadsLog(reader, w Seat) error {
	if reader.Worker == OwnerWorker || reader.Worker == w.Worker {
		return nil
	}
	below, err := c.Below(w.Position, reader.Position)
	if err != nil {
		return err
	}
	if !below {
		return Forbidden("%s may only read the activation logs of workers below %s (and its own); %s is not", reader.Worker, reader.Position, w)
	}
	return nil
}

// CheckReadsOrg says whether reader may read s-org, the audit trail: only
// the owner. The trail holds every change to every worker, so any broader
// rule would show a manager what happened above it.
func CheckReadsOrg(reader string) error {
	if reader != OwnerWorker {
		return Forbidden("%s is the org's audit trail; only %s reads it", StreamOrg, OwnerWorker)
	}
	return nil
}

// DMStreamID is the one stream two workers share for direct messages,
// the same whichever of them asks.
func DMStreamID(a, b string) string {
	pair := []string{a, b}
	slices.Sort(pair)
	return DMStreamPrefix + strings.Join(pair, "-")
}

// DMPair returns the two members of a DM stream, given the member that
// created it (worker ids contain hyphens, so the id alone is ambiguous).
func DMPair(stream, createdBy string) (a, b string, ok bool) {
	rest, found := strings.CutPrefix(stream, DMStreamPrefix)
	if !found || createdBy == "" {
		return "", "", false
	}
	var candidates []string
	if o, cut := strings.CutPrefix(rest, createdBy+"-"); cut {
		candidates = append(candidates, o)
	}
	if o, cut := strings.CutSuffix(rest, "-"+createdBy); cut {
		candidates = append(candidates, o)
	}
	for _, other := range candidates {
		if strings.HasPrefix(other, PrefixWorker) && other != createdBy && DMStreamID(createdBy, other) == stream {
			return createdBy, other, true
		}
	}
	return "", "", false
}

// CheckReadsDM says whether reader may read a DM stream: only its members.
func CheckReadsDM(reader, stream, createdBy string) error {
	a, b, ok := DMPair(stream, createdBy)
	if !ok || (reader != a && reader != b) {
		return Forbidden("%s is a direct-message stream; only its two members read it", stream)
	}
	return nil
}

// CheckReadsContact says whether reader may read a person's contact
// stream: only that person. It carries copies of their direct messages,
// which nobody else reads, not even the owner.
func CheckReadsContact(reader, stream string) error {
	_, person := StreamKindOf(stream)
	if reader != person {
		return Forbidden("%s is %s's contact stream, with copies of their direct messages; only %s reads it", stream, person, person)
	}
	return nil
}
