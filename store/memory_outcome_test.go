//go:build !race

// The memory benchmark's claim is built only without the race detector,
// and make test runs it on a line of its own, on SQLite (make
// test-postgres leaves it out: the SQL it goes through runs there in the
// store's memory tests): its five worlds are 1,500 runs each through a
// store of their own, one at a time, which the store's concurrent tests
// cover under -race; with it they took 280 s, the store package's whole
// tail in make test.

package store_test

import "testing"

// TestMemoryOutcome is the benchmark's claim on seed 1, so CI keeps it
// true, for the ranking recall uses by default (learned, hybrid). In the
// even mix: precision@5 on held-out queries at least 0.85 and 0.2 above
// the baseline, a share of wrong advice sunk within 5 outcomes at least
// 0.65 and 0.25 above the baseline's, at the cost of at most 0.1 of right
// advice sunk within 5 outcomes, corrected advice never back, scope kept;
// in the leaning mix, where the baseline leaves room below 1 for a gap,
// precision@5 at least 0.85 and 0.25 above the baseline, the median
// wrong insight gone within 5 outcomes, corrections and scope kept (seed 1
// measures 0.921 against 0.566, and 4 outcomes);
// in the wrong-heavy mix, where most advice a run cites is wrong, at most
// 0.25 of right advice sunk (0.31 to 0.42 when a failure was shared by the
// ratio of probabilities and a success beside wrong advice counted whole,
// domain.OutcomeShare). Seed 1 plays the same every run (its ids come from
// the seed) and measures 0.974 against 0.702, 0.77 against 0.35, 0.017,
// and 0.088; while ids were random, so that ties fell differently, it
// measured +0.27 to +0.34, 0.71 to 0.82, 0.00 to 0.04 and 0.06 to 0.14.
// The bars sit below that spread: any change that reorders ties moves a
// seed's figures as much, and the test is to catch a worse rule, not a
// reshuffle. (The issue asks 0.3 above the baseline and every wrong
// insight sunk within 5; the benchmark prints how far from those targets,
// and from the oracle, each seed is.)
func TestMemoryOutcome(t *testing.T) {
	t.Parallel()
	// The worlds are apart (a store each), so they play at once: this is
	// the store package's longest test.
	var base, learned, leanBase, lean, heavy memResult
	t.Run("worlds", func(t *testing.T) {
		t.Run("baseline", func(t *testing.T) { t.Parallel(); base = runMemWorld(t, 1, memBaseline, memEven) })
		t.Run("hybrid", func(t *testing.T) { t.Parallel(); learned = runMemWorld(t, 1, memHybrid, memEven) })
		t.Run("leaning-baseline", func(t *testing.T) { t.Parallel(); leanBase = runMemWorld(t, 1, memBaseline, memLeaning) })
		t.Run("leaning", func(t *testing.T) { t.Parallel(); lean = runMemWorld(t, 1, memHybrid, memLeaning) })
		t.Run("wrong-heavy", func(t *testing.T) { t.Parallel(); heavy = runMemWorld(t, 1, memHybrid, memWrongHeavy) })
	})
	t.Logf("baseline %+v", base)
	t.Logf("hybrid   %+v", learned)
	t.Logf("leaning baseline %+v", leanBase)
	t.Logf("leaning hybrid   %+v", lean)
	t.Logf("wrong-heavy hybrid %+v", heavy)
	checkMemClaims(t, base, learned)
	// In the leaning mix the baseline leaves room below 1 for the gap.
	if lean.precision < 0.85 || lean.precision < leanBase.precision+0.25 {
		t.Errorf("leaning mix: precision@5 learned %.3f, baseline %.3f; want learned ≥ 0.85 and ≥ baseline + 0.25", lean.precision, leanBase.precision)
	}
	if lean.sinkMedian > 5 {
		t.Errorf("leaning mix: the median wrong insight left every top 5 after %.1f outcomes; want at most 5", lean.sinkMedian)
	}
	if lean.returned > 0 || lean.leak > 0 {
		t.Errorf("leaning mix: corrected advice returned %d times, another role's advice %d times; want never", lean.returned, lean.leak)
	}
	if heavy.rightSunk > 0.25 {
		t.Errorf("wrong-heavy mix: right advice sunk within 5 outcomes %.3f; want at most 0.25", heavy.rightSunk)
	}
	if heavy.returned > 0 || heavy.leak > 0 {
		t.Errorf("wrong-heavy mix: corrected advice returned %d times, another role's advice %d times; want never", heavy.returned, heavy.leak)
	}
}

func checkMemClaims(tb testing.TB, base, learned memResult) {
	tb.Helper()
	if learned.precision < 0.85 || learned.precision < base.precision+0.2 {
		tb.Errorf("precision@5: learned %.3f, baseline %.3f; want learned ≥ 0.85 and ≥ baseline + 0.2", learned.precision, base.precision)
	}
	if learned.sunkWithin5 < 0.65 || learned.sunkWithin5 < base.sunkWithin5+0.25 {
		tb.Errorf("wrong advice sunk within 5 outcomes: learned %.3f, baseline %.3f; want learned ≥ 0.65 and ≥ baseline + 0.25", learned.sunkWithin5, base.sunkWithin5)
	}
	if learned.rightSunk > 0.1 {
		tb.Errorf("right advice sunk within 5 outcomes: learned %.3f; want at most 0.1", learned.rightSunk)
	}
	for mode, r := range map[string]memResult{"baseline": base, "learned": learned} {
		if r.returned > 0 || r.leak > 0 {
			tb.Errorf("%s: corrected advice returned %d times, another role's advice %d times; want never", mode, r.returned, r.leak)
		}
	}
}
