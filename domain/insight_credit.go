package domain

import (
	"math"
	"time"
)

// CreditDepths walks led_to links backwards from id and returns each
// insight an outcome of id credits, with its depth: id itself at 0, the
// insight whose recall led to it at 1, and so on up to maxCreditDepth.
// parents(x) lists the insights linked led_to x. An insight reached by two
// paths counts once, at its shallowest depth; a cycle ends the walk.
func CreditDepths(id string, parents func(string) ([]string, error)) (map[string]int, error) {
	depth := map[string]int{id: 0}
	level := []string{id}
	for d := 1; d <= maxCreditDepth && len(level) > 0; d++ {
		var next []string
		for _, x := range level {
			ps, err := parents(x)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				if _, seen := depth[p]; !seen {
					depth[p] = d
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return depth, nil
}

// OutcomeShares is each cited insight's share of a run's outcome
// (OutcomeShare) given the others as they stand when it comes in.
func OutcomeShares(cited []InsightStats, o InsightOutcome) []float64 {
	out := make([]float64, len(cited))
	others := make([]InsightStats, 0, len(cited))
	for i, s := range cited {
		others = append(append(others[:0], cited[:i]...), cited[i+1:]...)
		out[i] = OutcomeShare(s, others, o)
	}
	return out
}

// OutcomeShare is how much a run's one outcome counts for one insight it
// cited (self), from 0 to 1 (as much as a run that cited it alone), given
// the others it cited (companions). The store reads it in hindsight: it
// folds an insight's ledger with its companions as they stand now, not
// as they stood when the outcome came in. Under the learned model a run
// that follows only sound advice succeeds with probability soundRuns and
// one that follows any unsound advice with unsoundRuns, and each share
// is the larger of two weights.
//
// A failure:
//   - what it says of self given its companions (attributable): the
//     weight of its likelihood ratio for self being unsound. Beside advice
//     since proven sound the failure is its own, whole, however proven it
//     was: that is how advice that stops being true sinks, and how a
//     failure first laid on a suspect that then proved sound comes back
//     to this one;
//   - the odds that self is the unsound step against the odds that the
//     most suspect one cited is (the ratio of their odds of being
//     unsound): among advice nobody knows yet all take it whole, and
//     beside advice since shown unsound it weighs little on the rest,
//     however suspect they look too. A ratio of probabilities instead
//     would blame right advice beside wrong whole for ever once both look
//     bad, since each failure they share keeps both suspect.
//
// A success:
//   - its likelihood ratio for self being sound, the same way;
//   - the odds that the least sound companion was sound, at most 1: a run
//     that succeeded beside advice that is likely unsound was likely
//     lucky, and says little of the rest; beside advice nobody knows yet,
//     or proven, it counts whole.
func OutcomeShare(self InsightStats, companions []InsightStats, o InsightOutcome) float64 {
	// others is the chance every companion is sound; least the lowest
	// log-odds of soundness among the companions.
	others, least, mine := 1.0, math.Inf(1), self.logOdds()
	for _, c := range companions {
		lo := c.logOdds()
		others *= soundChance(lo)
		least = min(least, lo)
	}
	var share float64
	switch o {
	case OutcomeFailed:
		ifSound := others*(1-soundRuns) + (1-others)*(1-unsoundRuns)
		share = math.Log((1-unsoundRuns)/ifSound) / math.Log((1-unsoundRuns)/(1-soundRuns))
		share = max(share, math.Exp(min(least, mine)-mine))
	case OutcomeHelped:
		ifSound := others*soundRuns + (1-others)*unsoundRuns
		share = math.Log(ifSound/unsoundRuns) / math.Log(soundRuns/unsoundRuns)
		share = max(share, math.Exp(min(least, 0)))
	default:
		return 1
	}
	// A ledger row of weight 0 would read as a whole outcome.
	return max(share, 1e-6)
}

// OutcomeSource is where a run's outcome came from. A run's own end is
// the weakest word on it; what its work became (an item accepted, sent
// back or blocked; an approval granted or denied) overrides it, and a
// person's rating overrides both. Between two words of one strength the
// later stands.
type OutcomeSource string

const (
	SourceRun      OutcomeSource = "run"
	SourceItem     OutcomeSource = "item"
	SourceApproval OutcomeSource = "approval"
	SourceRating   OutcomeSource = "rating"
)

// Strength orders sources: run < item = approval < rating.
func (s OutcomeSource) Strength() int {
	switch s {
	case SourceRun:
		return 0
	case SourceItem, SourceApproval:
		return 1
	case SourceRating:
		return 2
	}
	return -1
}

// RunOutcome is the one outcome of a run that credits every insight it
// cited: helped or failed, from its strongest source.
type RunOutcome struct {
	Activation string
	Outcome    InsightOutcome
	Source     OutcomeSource
	// By is who said it (the reviewer, the approver, the rater); Note why.
	By   string
	Note string
	At   time.Time
	// Proposed is the pattern a rating of helped with a note proposed
	// (quarantined until a person confirms it), if any.
	Proposed string
}

// RunRatings are the words a person rates a run with.
var RunRatings = []string{"succeeded", "failed"}

// InsightVote is one person's word on an insight outside any run: one per
// person and insight (a second replaces the first), weighted by the
// chart (VoteWeight, or ManagerVoteWeight for one above the insight's
// scope).
type InsightVote struct {
	Insight string
	Voter   string
	Outcome InsightOutcome
	Weight  float64
	Note    string
	At      time.Time
}

// Vote weights: a person's word counts as one outcome; a manager of the
// insight's scope (above the role's positions, the position or the
// worker it is for; the owner for the org) counts twice.
const (
	VoteWeight        = 1.0
	ManagerVoteWeight = 2.0
)
