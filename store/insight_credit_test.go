package store_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// counts is an insight's direct counters and credit, as a table compares
// them.
type counts struct {
	Helped, Failed int
	CH, CF         float64
}

func countsOf(t *testing.T, st *store.Store, id string) counts {
	t.Helper()
	in, err := st.GetInsight(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return counts{in.Stats.Helped, in.Stats.Failed, in.Stats.CreditHelped, in.Stats.CreditFailed}
}

func mustInsight(t *testing.T, st *store.Store, id string) domain.Insight {
	t.Helper()
	in, err := st.GetInsight(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestOneOutcomePerRun: a run's one outcome credits what it cited and
// nothing it was only shown; an approval denied while it ran outweighs
// its own success; a person's rating outweighs both; each replaces the
// last, so the cited insight holds one outcome at every step.
func TestOneOutcomePerRun(t *testing.T) {
	t.Parallel()
	st, clock := insightOrg(t)
	ctx := t.Context()
	cited := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the payments service", Resolution: "drain the queue first"})
	shown := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the search service", Resolution: "warm the cache"})
	recallIDs(t, st, "w-bot", store.RecallQuery{Query: "deploy service", Limit: 5, Activation: "a-1"})
	act, _, _, err := st.Claim(ctx, "w-bot", "a-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsightFeedback(ctx, "w-bot", "a-1", []string{cited.ID}, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	canon, hash, _ := domain.CanonicalArgs([]byte(`{"worker":"w-other"}`))
	ap, err := st.RequestApproval(ctx, domain.Approval{WorkerID: "w-bot", Tool: "dismiss_worker", Arguments: canon, ArgsHash: hash, ActivationID: "a-1", Why: "grant requires approval"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DecideApproval(ctx, "w-lead", ap.ID, domain.DecisionDeny, "not that worker"); err != nil {
		t.Fatal(err)
	}
	if got := countsOf(t, st, cited.ID); got != (counts{}) {
		t.Errorf("credit before the run ended = %+v, want none", got)
	}
	clock.Advance(time.Minute)
	act.Status = domain.ActivationSucceeded
	exit := domain.Event{StreamID: domain.ActivationStreamPrefix + "w-bot", Message: domain.Message{Body: "exit"}}
	if err := st.FinishActivation(ctx, act, exit); err != nil {
		t.Fatal(err)
	}
	denied := domain.RunOutcome{Outcome: domain.OutcomeFailed, Source: domain.SourceApproval, By: "w-lead", Note: "approval " + ap.ID + " of dismiss_worker denied"}
	steps := []struct {
		name        string
		do          func() error
		wantCited   counts
		wantOutcome domain.RunOutcome
	}{
		{"ended: the denied approval outweighs the run's success", func() error { return nil },
			counts{Failed: 1, CF: 1}, denied},
		{"a second end changes nothing", func() error { return st.FinishActivation(ctx, act, exit) },
			counts{Failed: 1, CF: 1}, denied},
		{"a person's rating outweighs the approval", func() error {
			_, err := st.RateActivation(ctx, "w-lead", "a-1", "succeeded", "the denial was my mistake")
			return err
		}, counts{Helped: 1, CH: 1}, domain.RunOutcome{Outcome: domain.OutcomeHelped, Source: domain.SourceRating, By: "w-lead", Note: "the denial was my mistake"}},
		{"the owner's later rating replaces it", func() error {
			_, err := st.RateActivation(ctx, "w-owner", "a-1", "failed", "")
			return err
		}, counts{Failed: 1, CF: 1}, domain.RunOutcome{Outcome: domain.OutcomeFailed, Source: domain.SourceRating, By: "w-owner"}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := countsOf(t, st, cited.ID); got != s.wantCited {
			t.Errorf("%s: cited insight %+v, want %+v", s.name, got, s.wantCited)
		}
		if got := countsOf(t, st, shown.ID); got != (counts{}) {
			t.Errorf("%s: the insight only shown got %+v, want nothing", s.name, got)
		}
		o, err := st.RunOutcome(ctx, "a-1")
		if err != nil {
			t.Fatal(err)
		}
		s.wantOutcome.Activation = "a-1"
		if diff := cmp.Diff(s.wantOutcome, o, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore())); diff != "" {
			t.Errorf("%s: outcome (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestVotes: one vote per person per insight, a later one replacing it;
// a manager of the insight's scope counts twice; an AI worker cannot vote
// outside a run; every vote is in the history.
func TestVotes(t *testing.T) {
	t.Parallel()
	st, _ := insightOrg(t)
	ctx := t.Context()
	bots := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "flaky build", Resolution: "rerun it", Scope: domain.ScopeRole, Target: "r-b"})
	for range 7 {
		if err := st.InsightFeedback(ctx, "w-lead", "", []string{bots.ID}, domain.OutcomeFailed, "hides real failures"); err != nil {
			t.Fatal(err)
		}
	}
	// w-lead is above p-bot, which holds r-b: a manager of the scope.
	if got, want := countsOf(t, st, bots.ID), (counts{Failed: 1, CF: 2}); got != want {
		t.Errorf("after seven failed votes of w-lead: %+v, want %+v (one vote, weight 2)", got, want)
	}
	// Seven votes move it as far as one vote moves another insight: the
	// same effectiveness, sunk alike.
	once := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "flaky deploy", Resolution: "rerun it", Scope: domain.ScopeRole, Target: "r-b"})
	if err := st.InsightFeedback(ctx, "w-lead", "", []string{once.ID}, domain.OutcomeFailed, "hides real failures"); err != nil {
		t.Fatal(err)
	}
	seven, one := mustInsight(t, st, bots.ID).Stats, mustInsight(t, st, once.ID).Stats
	if seven.LearnedEffectiveness() != one.LearnedEffectiveness() || seven.Sinks() != one.Sinks() {
		t.Errorf("seven votes: effectiveness %.3f, sunk %v; one vote: %.3f, sunk %v; want the same",
			seven.LearnedEffectiveness(), seven.Sinks(), one.LearnedEffectiveness(), one.Sinks())
	}
	if err := st.InsightFeedback(ctx, "w-lead", "", []string{bots.ID}, domain.OutcomeHelped, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	if got, want := countsOf(t, st, bots.ID), (counts{Helped: 1, CH: 2}); got != want {
		t.Errorf("after w-lead's change of mind: %+v, want %+v", got, want)
	}
	err := st.InsightFeedback(ctx, "w-bot", "", []string{bots.ID}, domain.OutcomeFailed, "")
	if !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("an AI worker's vote outside a run: %v, want forbidden", err)
	}
	votes, err := st.InsightVotes(ctx, "w-owner", bots.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(votes) != 1 || votes[0].Voter != "w-lead" || votes[0].Outcome != domain.OutcomeHelped || votes[0].Weight != 2 || votes[0].Note != "changed my mind" {
		t.Errorf("votes = %+v, want w-lead's latest, weight 2", votes)
	}
}

// TestWorkAcceptedOrSentBack: the reviewer's verdict on a task's built
// work is the outcome of the runs that delivered its items, overriding
// their own success.
func TestWorkAcceptedOrSentBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		approve bool
		want    counts
	}{{true, counts{Helped: 1, CH: 1}}, {false, counts{Failed: 1, CF: 1}}} {
		t.Run(map[bool]string{true: "accepted", false: "sent back"}[tc.approve], func(t *testing.T) {
			st, _ := insightOrg(t)
			ctx := t.Context()
			if _, err := st.HireWorker(ctx, "w-owner", domain.Worker{ID: "w-b1", Kind: domain.WorkerAI, PositionID: "p-a", Name: "b1"}, nil); err != nil {
				t.Fatal(err)
			}
			advice := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "login form", Resolution: "validate on the server"})
			if _, err := st.CreateSpecTask(ctx, "w-owner", domain.SpecTask{ID: "t-x", Title: "X", Prompt: "x", Planner: "w-bot", Builders: []string{"w-b1"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.SubmitSpec(ctx, "w-bot", "t-x", "d", []domain.TaskItem{{Seq: 1, Title: "login form"}}, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := st.ReviewSpec(ctx, "w-owner", "t-x", true, ""); err != nil {
				t.Fatal(err)
			}
			a, _, _, err := st.Claim(ctx, "w-b1", "a-1", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			recallIDs(t, st, "w-b1", store.RecallQuery{Query: "login form", Activation: "a-1"})
			if err := st.InsightFeedback(ctx, "w-b1", "a-1", []string{advice.ID}, domain.OutcomeUtilized, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := st.ReportItem(ctx, "w-b1", "t-x", 1, domain.OutcomeDelivered, "built it", ""); err != nil {
				t.Fatal(err)
			}
			a.Status = domain.ActivationSucceeded
			if err := st.FinishActivation(ctx, a, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-b1", Message: domain.Message{Body: "exit"}}); err != nil {
				t.Fatal(err)
			}
			if got, want := countsOf(t, st, advice.ID), (counts{Helped: 1, CH: 1}); got != want {
				t.Fatalf("after the run's own success: %+v, want %+v", got, want)
			}
			if _, err := st.ReviewSpec(ctx, "w-owner", "t-x", tc.approve, "the form posts passwords in the URL"); err != nil {
				t.Fatal(err)
			}
			if got := countsOf(t, st, advice.ID); got != tc.want {
				t.Errorf("after review: %+v, want %+v", got, tc.want)
			}
			if o, err := st.RunOutcome(ctx, "a-1"); err != nil || o.Source != domain.SourceItem {
				t.Errorf("outcome of a-1 = %+v, %v; want one from the item", o, err)
			}
		})
	}
}

// TestCreditInHindsight: a shared failure is laid on each insight by what
// is known now of the others the run cited, not by what was known then.
// x fails beside y, then y shows what it is, then x fails alone: beside
// advice since proven the first failure was x's own, and x sinks; beside
// advice since shown unsound it was mostly y's, and x holds.
func TestCreditInHindsight(t *testing.T) {
	t.Parallel()
	type run struct {
		cited string // x, y or both ("xy")
		ok    bool
	}
	for _, tc := range []struct {
		name     string
		runs     []run
		wantSunk bool
	}{
		{"y failed first, then proved sound: the shared failure is x's", []run{
			{"y", false}, {"y", false}, {"xy", false}, {"y", true}, {"y", true}, {"y", true}, {"y", true}, {"y", true}, {"x", false},
		}, true},
		{"y unknown at the time, then shown unsound: the shared failure is mostly y's", []run{
			{"xy", false}, {"y", false}, {"y", false}, {"x", false},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, clock := insightOrg(t)
			ids := map[byte]string{
				'x': storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the payments service", Resolution: "drain the queue first"}).ID,
				'y': storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the search service", Resolution: "warm the cache"}).ID,
			}
			workStream(t, st)
			for i, r := range tc.runs {
				var cited []string
				for _, c := range []byte(r.cited) {
					cited = append(cited, ids[c])
				}
				citeRun(t, st, clock, fmt.Sprintf("a-%d", i+1), cited, r.ok)
			}
			x := mustInsight(t, st, ids['x']).Stats
			if x.Sinks() != tc.wantSunk {
				t.Errorf("x sunk = %v (helped credit %.2f, failed %.2f), want %v", x.Sinks(), x.CreditHelped, x.CreditFailed, tc.wantSunk)
			}
		})
	}
}

// TestSharedFailureFoldsByID: a run's end folds what it cited in the
// order of their ids, each reading those before it, so the same run
// credits the same way every time: of three insights nobody knew yet,
// the first by id takes the failure whole and the others a quarter,
// also when the last led to the first (its ancestor's share comes with
// it) — played afresh eight times, since the order once came from a map.
func TestSharedFailureFoldsByID(t *testing.T) {
	t.Parallel()
	for play := range 8 {
		st, clock := insightOrg(t)
		var ids []string
		for _, s := range []string{"payments", "search", "billing"} {
			ids = append(ids, storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the " + s + " service", Resolution: "drain the " + s + " queue first"}).ID)
		}
		slices.Sort(ids)
		if err := st.LinkInsights(t.Context(), "w-owner", domain.InsightLink{From: ids[2], To: ids[0], Kind: domain.LinkLedTo}); err != nil {
			t.Fatal(err)
		}
		workStream(t, st)
		citeRun(t, st, clock, "a-1", ids, false)
		for i, want := range []float64{1, 0.25} {
			if got := countsOf(t, st, ids[i]); math.Abs(got.CF-want) > 1e-9 {
				t.Errorf("play %d: insight %d by id has failed credit %.4f, want %.2f", play+1, i+1, got.CF, want)
			}
		}
	}
}

// TestRunCitingManyInsights: a run's end credits every insight it cited
// however many (the fold reads them in chunks), each with its one
// outcome.
func TestRunCitingManyInsights(t *testing.T) {
	t.Parallel()
	st, clock := insightOrg(t)
	const n = 150 // more than two chunks
	var ids []string
	for i := range n {
		ids = append(ids, storeInsight(t, st, "w-owner", domain.Insight{Trigger: fmt.Sprintf("deploy service %d", i), Resolution: fmt.Sprintf("drain queue %d first", i)}).ID)
	}
	workStream(t, st)
	citeRun(t, st, clock, "a-1", ids, false)
	citeRun(t, st, clock, "a-2", ids[n/2:], true)
	for i, id := range ids {
		got := countsOf(t, st, id)
		want := counts{Failed: 1}
		if i >= n/2 {
			want.Helped = 1
		}
		if got.Helped != want.Helped || got.Failed != want.Failed || got.CF <= 0 || (want.Helped == 1) != (got.CH > 0) {
			t.Errorf("insight %d of %d: %+v, want %d helped and %d failed, with credit for each", i+1, n, got, want.Helped, want.Failed)
		}
	}
}

// workStream gives w-bot a stream to be woken on, s-work.
func workStream(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	if _, err := st.CreateStream(ctx, "w-owner", domain.Stream{ID: "s-work", Name: "work", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Subscribe(ctx, "w-owner", "s-work", "w-bot"); err != nil {
		t.Fatal(err)
	}
}

// citeRun plays one run of w-bot, a minute after the last, that cites
// cited and succeeds or fails.
func citeRun(t *testing.T, st *store.Store, clock *storetest.Clock, id string, cited []string, ok bool) {
	t.Helper()
	ctx := t.Context()
	clock.Advance(time.Minute)
	if _, err := st.Append(ctx, domain.Event{StreamID: "s-work", Source: "w-owner", Message: domain.Message{Body: "work"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	act, _, _, err := st.Claim(ctx, "w-bot", id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsightFeedback(ctx, "w-bot", id, cited, domain.OutcomeUtilized, ""); err != nil {
		t.Fatal(err)
	}
	act.Status = map[bool]domain.ActivationStatus{true: domain.ActivationSucceeded, false: domain.ActivationFailed}[ok]
	if err := st.FinishActivation(ctx, act, domain.Event{StreamID: domain.ActivationStreamPrefix + "w-bot", Message: domain.Message{Body: "exit"}}); err != nil {
		t.Fatal(err)
	}
}

// TestCreditSettles: the fold of long-cited advice starts from what has
// settled, and says what folding the whole ledger says: the counts
// exactly, the effectiveness recall ranks by within a hundredth (the
// settled rows' shares were fixed as things stood then); a run judged
// again and a vote changed after their rows settled count once.
func TestCreditSettles(t *testing.T) {
	t.Parallel()
	st, clock := insightOrg(t)
	ctx := t.Context()
	x := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the payments service", Resolution: "drain the queue first"}).ID
	y := storeInsight(t, st, "w-owner", domain.Insight{Trigger: "deploy the search service", Resolution: "warm the cache"}).ID
	workStream(t, st)
	if err := st.InsightFeedback(ctx, "w-lead", "", []string{x}, domain.OutcomeFailed, "it lost messages"); err != nil {
		t.Fatal(err)
	}
	citeRun(t, st, clock, "a-early", []string{x, y}, false)
	if err := st.SeedCredit(ctx, []string{x, y}, 400, func(i int) bool { return i%4 != 0 }); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	citeRun(t, st, clock, "a-late", []string{x, y}, true)

	// Direct outcomes: the vote, a-early, 400 seeded (300 helped), a-late.
	base := counts{Helped: 301, Failed: 102}
	steps := []struct {
		name string
		do   func() error
		want counts
	}{
		{"settled", func() error { return nil }, base},
		{"a-early rated a success after its row settled", func() error {
			_, err := st.RateActivation(ctx, "w-owner", "a-early", "succeeded", "")
			return err
		}, counts{Helped: base.Helped + 1, Failed: base.Failed - 1}},
		{"the lead changes the vote after it settled", func() error {
			return st.InsightFeedback(ctx, "w-lead", "", []string{x}, domain.OutcomeHelped, "it was the broker")
		}, counts{Helped: base.Helped + 2, Failed: base.Failed - 2}},
		{"another run after both", func() error {
			citeRun(t, st, clock, "a-last", []string{x, y}, true)
			return nil
		}, counts{Helped: base.Helped + 3, Failed: base.Failed - 2}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := countsOf(t, st, x)
		if got.Helped != s.want.Helped || got.Failed != s.want.Failed {
			t.Errorf("%s: x helped %d failed %d, want %d and %d", s.name, got.Helped, got.Failed, s.want.Helped, s.want.Failed)
		}
		whole, settled, err := st.FoldWhole(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		if !settled {
			t.Errorf("%s: x has no checkpoint after %d outcomes; its fold reads the whole ledger", s.name, got.Helped+got.Failed)
		}
		folded := domain.InsightStats{Helped: got.Helped, Failed: got.Failed, CreditHelped: got.CH, CreditFailed: got.CF}
		if whole.Helped != got.Helped || whole.Failed != got.Failed ||
			math.Abs(whole.LearnedEffectiveness()-folded.LearnedEffectiveness()) > 0.01 {
			t.Errorf("%s: x folded from its checkpoint %+v (effectiveness %.4f), the whole ledger %+v (%.4f)", s.name, got,
				folded.LearnedEffectiveness(), whole, whole.LearnedEffectiveness())
		}
	}
}
