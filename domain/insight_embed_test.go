package domain_test

import (
	"math"
	"testing"

	"github.com/helixml/helix-org/domain"
)

// TestHashEmbedder: texts that share words or most of their letters read
// alike, unrelated texts do not, and a vector survives the store's
// encoding.
func TestHashEmbedder(t *testing.T) {
	e := domain.LocalEmbedder
	vs, err := e.Embed(t.Context(), []string{"deploy the payments service", "deploying payment services", "refund a customer's invoice", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		a, b     []float32
		min, max float64
	}{
		{"itself", vs[0], vs[0], 0.999, 1.001},
		{"other forms of the same words", vs[0], vs[1], 0.5, 1},
		{"another situation", vs[0], vs[2], 0, 0.3},
		{"no words", vs[0], vs[3], 0, 0},
		{"other sizes", vs[0], vs[0][:10], 0, 0},
	} {
		if got := domain.Cosine(tc.a, tc.b); got < tc.min || got > tc.max {
			t.Errorf("%s: cosine %.3f, want %.2f to %.2f", tc.name, got, tc.min, tc.max)
		}
	}
	if got := domain.DecodeVector(nil, domain.EncodeVector(vs[1])); domain.Cosine(got, vs[1]) < 0.999999 || len(got) != e.Dim {
		t.Errorf("decoded %d values, want %d and the same vector", len(got), e.Dim)
	}
	if e.Model() != "local-trigram-128" {
		t.Errorf("model = %q", e.Model())
	}
}

// TestOutcomeShares: a success counts whole for each insight cited
// beside advice unknown or proven, and little beside advice likely
// unsound (likely luck); a failure lands whole on the most suspect and on
// any insight cited beside advice known to be sound, and on the others by
// the ratio of their odds of being unsound to the most suspect's.
func TestOutcomeShares(t *testing.T) {
	unknown := domain.InsightStats{}
	proven := domain.InsightStats{CreditHelped: 5}
	failing := domain.InsightStats{CreditFailed: 1}
	for _, tc := range []struct {
		name  string
		cited []domain.InsightStats
		o     domain.InsightOutcome
		want  []float64
	}{
		{"success beside unknown or proven advice: whole for each", []domain.InsightStats{unknown, unknown, proven}, domain.OutcomeHelped, []float64{1, 1, 1}},
		{"success beside failing advice: little for the rest (likely luck), whole for the failing",
			[]domain.InsightStats{unknown, proven, failing}, domain.OutcomeHelped, []float64{0.339, 0.25, 1}},
		{"success, cited alone: whole", []domain.InsightStats{failing}, domain.OutcomeHelped, []float64{1}},
		{"failure, cited alone: whole", []domain.InsightStats{proven}, domain.OutcomeFailed, []float64{1}},
		{"failure beside proven advice: whole on the unknown, a third on the proven",
			[]domain.InsightStats{unknown, proven}, domain.OutcomeFailed, []float64{1, 0.339}},
		{"failure of proven advice only: whole on each (advice that stops being true sinks)",
			[]domain.InsightStats{proven, proven}, domain.OutcomeFailed, []float64{1, 1}},
		{"failure beside failing advice: whole on the failing, a quarter on the unknown (the ratio of their odds)",
			[]domain.InsightStats{unknown, failing}, domain.OutcomeFailed, []float64{0.25, 1}},
		{"failure of right advice beside wrong, both looking bad: the worse takes it whole, the other by the ratio of their odds",
			[]domain.InsightStats{{CreditFailed: 2}, {CreditFailed: 4}}, domain.OutcomeFailed, []float64{0.0625, 1}},
		{"failure of four unknowns: whole on each (none more suspect)", []domain.InsightStats{unknown, unknown, unknown, unknown}, domain.OutcomeFailed, []float64{1, 1, 1, 1}},
	} {
		got := domain.OutcomeShares(tc.cited, tc.o)
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 0.01 {
				t.Errorf("%s: shares %.3f, want %.3f", tc.name, got, tc.want)
				break
			}
		}
	}
}
