package store_test

import (
	"fmt"
	"math"
)

// The Bayes-optimal reference for time to sink. An oracle knows the
// world's exact likelihoods — a run that follows wrong advice succeeds
// with probability memWrongP and one that follows only right advice
// memRightP, and the reviewer flips one outcome in memNoise — and every
// outcome each insight was credited with, and in its favour it knows
// which outcomes came beside other wrong advice too, so the outcomes of
// right advice that it reads are all clean (p right) and those of wrong
// advice are p wrong. Nothing can tell the two apart better. Within 5
// outcomes the likelihood ratio of a record depends only on how many of
// them failed, so (Neyman–Pearson) the best rule for a given cost in
// right advice sunk is "sink on the m-th failure within 5": whatever a
// ranking does, it sinks no more wrong advice within 5 outcomes than the
// oracle at the same cost.

// memSeen is the chance a run's reviewer reports success when the run
// succeeds with probability p.
func memSeen(p float64) float64 { return p*(1-memNoise) + (1-p)*memNoise }

// memOracleRule is "sink on the m-th failure within 5 outcomes": the
// share of wrong and of right advice (cited 5 times) it sinks.
type memOracleRule struct {
	m            int
	wrong, right float64
}

// memOracle is the rule for each m from 1 to 5.
func memOracle() []memOracleRule {
	failWrong, failRight := 1-memSeen(memWrongP), 1-memSeen(memRightP)
	var out []memOracleRule
	for m := 1; m <= 5; m++ {
		out = append(out, memOracleRule{m, memAtLeast(5, m, failWrong), memAtLeast(5, m, failRight)})
	}
	return out
}

// memAtLeast is P(Binomial(n, p) ≥ k).
func memAtLeast(n, k int, p float64) float64 {
	sum := 0.0
	for i := k; i <= n; i++ {
		sum += float64(memChoose(n, i)) * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
	}
	return sum
}

func memChoose(n, k int) int {
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
	}
	return c
}

// memBestRule is the oracle rule that sinks the most wrong advice while
// sinking at most 2 in 7 of right advice: what the even mix can spare,
// its 7 right insights a worker sees per topic filling the top 5 still.
// It is the reference for both mixes (in the wrong-heavy one right advice
// of other topics fills the places).
func memBestRule() memOracleRule {
	rules := memOracle()
	best := rules[len(rules)-1]
	for _, r := range rules {
		if r.right <= 2.0/7 && r.wrong > best.wrong {
			best = r
		}
	}
	return best
}

// memOracleLines says what the oracle reaches, for the printout.
func memOracleLines() []string {
	lines := []string{fmt.Sprintf("oracle: outcomes seen succeed with p %.2f for right advice (all cited right) and %.2f for wrong (reviewer noise included); the best rule for a cost is: sink on the m-th failure within 5 outcomes",
		memSeen(memRightP), memSeen(memWrongP))}
	for _, r := range memOracle() {
		lines = append(lines, fmt.Sprintf("oracle: m=%d sinks within 5 outcomes %.4f of wrong advice and %.4f of right advice", r.m, r.wrong, r.right))
	}
	best, first := memBestRule(), memOracle()[0]
	lines = append(lines,
		fmt.Sprintf("oracle: sinking at most 2 in 7 of right advice, the best any rule can do is m=%d: %.4f of wrong advice sunk within 5 outcomes (%.4f of right advice sunk)", best.m, best.wrong, best.right),
		fmt.Sprintf("oracle: every wrong insight sunk within 5 outcomes is out of reach: wrong advice goes 5 for 5 with probability %.5f, so even sinking on a 1st failure (%.4f of right advice lost) misses some; each seed's line says how likely the oracle is to sink all of its wrong insights",
			math.Pow(memSeen(memWrongP), 5), first.right))
	return lines
}
