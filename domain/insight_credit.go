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
// as they stood when the outcome came in. A success counts whole: under
// "one wrong step fails the run" it says each was sound. A failure counts
// the larger of two weights:
//
//   - its suspicion, 1 − effectiveness, against the most suspect's, which
//     takes it whole: a failure beside advice since shown unsound weighs
//     less on advice that has kept working, and among advice nobody knows
//     yet all take it;
//   - what the failure says of it given its companions (attributable):
//     the weight of the failure's likelihood ratio for it being unsound,
//     when a run fails with probability 1 − soundRuns if all it followed is
//     sound and 1 − unsoundRuns if not. Beside advice since proven sound
//     the failure is its own, whole, however proven it was: that is how
//     advice that stops being true sinks, and how a failure first laid on
//     a suspect that then proved sound comes back to this one.
func OutcomeShare(self InsightStats, companions []InsightStats, o InsightOutcome) float64 {
	if o != OutcomeFailed {
		return 1
	}
	// others is the chance every companion is sound.
	others, most := 1.0, 1-self.LearnedEffectiveness()
	for _, c := range companions {
		others *= c.LearnedEffectiveness()
		most = max(most, 1-c.LearnedEffectiveness())
	}
	ifSound := others*(1-soundRuns) + (1-others)*(1-unsoundRuns)
	share := math.Log((1-unsoundRuns)/ifSound) / math.Log((1-unsoundRuns)/(1-soundRuns))
	if most > 0 {
		share = max(share, (1-self.LearnedEffectiveness())/most)
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
