package domain

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Ranking of insights. It is pure arithmetic over counts a store hands
// in (term hits, outcome counters, times), so any store can serve recall:
//
//	baseline: 0.5·relevance + 0.3·effectiveness + 0.2·recency
//	learned:  relevance · effectiveness · (0.85 + 0.15·recency)
//
// relevance is BM25 over trigger, resolution and tags divided by the best
// candidate's (blended with an embedding's cosine when the search is
// hybrid), recency is 2^(−days since last use / 7), and effectiveness
// depends on the mode: the baseline reads helped / (helped + failed) (0.5
// with no feedback); the learned mode reads the credit-weighted outcomes,
// older ones fading (creditMemory), as the odds that the advice is sound
// (LearnedEffectiveness), and sinks an insight whose attributable
// failures outweigh its successes by SinkMargin below every other,
// however well it reads. A product, not a sum: advice known to work
// overcomes an unproven rival's lead in relevance, and advice about
// something else, however proven, does not outrank advice about this.
const (
	weightRelevance     = 0.5
	weightEffectiveness = 0.3
	weightRecency       = 0.2
	// learnedWeightRecency is the share of the learned score recency
	// can take away: a tie-break between advice that reads and works alike.
	learnedWeightRecency = 0.15
	// recencyHalfLife is how long recency takes to halve.
	recencyHalfLife = 7 * 24 * time.Hour
	// creditDecay is what an outcome passes to each led_to ancestor, per
	// level; maxCreditDepth is the deepest ancestor it reaches.
	creditDecay    = 0.5
	maxCreditDepth = 3
	// soundRuns and unsoundRuns are the learned model of advice: a run
	// that follows sound advice (and nothing unsound beside it) succeeds
	// four times in five, one that follows unsound advice one time in
	// five. Each outcome of weight 1 multiplies the odds that the advice
	// is sound by four, or divides them by four.
	soundRuns   = 0.8
	unsoundRuns = 0.2
	// SinkMargin: in the learned mode an insight whose failed credit
	// exceeds its helped credit by SinkMargin (effectiveness 1/9 or less:
	// more than one failure laid at its door for each success) ranks
	// after all others.
	SinkMargin = 1.5
	// constraintFrom and riskBelow sort injected insights into
	// constraints, risks and context.
	constraintFrom = 0.70
	riskBelow      = 0.40
	// creditMemory is how much of an insight's earlier credit an outcome
	// of weight 1 keeps: evidence fades as new evidence comes, so advice
	// that stops being true sinks after a few failures however long it
	// worked (its credit is at most 1/(1−creditMemory) outcomes' worth).
	creditMemory = 0.8
	// bm25 parameters, the usual ones.
	bm25K1 = 1.2
	bm25B  = 0.75
)

// RankMode chooses how effectiveness is estimated.
type RankMode string

const (
	RankBaseline RankMode = "baseline"
	RankLearned  RankMode = "learned"
)

// BaselineEffectiveness is helped / (helped + failed), 0.5 with none.
func (s InsightStats) BaselineEffectiveness() float64 {
	if s.Helped+s.Failed == 0 {
		return 0.5
	}
	return float64(s.Helped) / float64(s.Helped+s.Failed)
}

// LearnedEffectiveness is the probability that the advice is sound,
// from even odds, each unit of helped credit multiplying the odds by
// soundRuns/unsoundRuns and each unit of failed credit dividing them by
// (1−unsoundRuns)/(1−soundRuns): what matters is how far successes
// outweigh failures, so a few attributable failures sink advice that had
// nothing for it, and long-proven advice survives one bad run.
func (s InsightStats) LearnedEffectiveness() float64 { return soundChance(s.logOdds()) }

// soundChance is the probability of soundness for log-odds lo.
func soundChance(lo float64) float64 { return 1 / (1 + math.Exp(-lo)) }

// logOdds is the log of the odds that the advice is sound.
func (s InsightStats) logOdds() float64 {
	return s.CreditHelped*math.Log(soundRuns/unsoundRuns) - s.CreditFailed*math.Log((1-unsoundRuns)/(1-soundRuns))
}

// Effectiveness in the given mode.
func (s InsightStats) Effectiveness(mode RankMode) float64 {
	if mode == RankBaseline {
		return s.BaselineEffectiveness()
	}
	return s.LearnedEffectiveness()
}

// Sinks says whether the learned mode ranks it after all others.
func (s InsightStats) Sinks() bool {
	return s.CreditFailed-s.CreditHelped >= SinkMargin
}

// CreditWeight is the share of an outcome an insight depth led_to links
// above the cited one gets.
func CreditWeight(depth int) float64 { return math.Pow(creditDecay, float64(depth)) }

// Credit adds an outcome of weight w (1 for a run's outcome of the
// insight itself, creditDecay^depth for an ancestor, a vote's weight);
// count is how many direct outcomes it is, for the counters the baseline
// reads (0 for an ancestor's share).
func (s *InsightStats) Credit(o InsightOutcome, w float64, count int) {
	keep := math.Pow(creditMemory, w)
	s.CreditHelped *= keep
	s.CreditFailed *= keep
	switch o {
	case OutcomeHelped:
		s.CreditHelped += w
		s.Helped += count
	case OutcomeFailed:
		s.CreditFailed += w
		s.Failed += count
	}
}

// Recency is 2^(−age/half-life) of the last use, or of creation when
// never used.
func Recency(last, created, now time.Time) float64 {
	if last.IsZero() {
		last = created
	}
	age := now.Sub(last)
	if age < 0 {
		age = 0
	}
	return math.Exp2(-float64(age) / float64(recencyHalfLife))
}

// score combines the three parts as the mode does.
func (m RankMode) score(rel, eff, rec float64) float64 {
	if m == RankLearned {
		return rel * eff * (1 - learnedWeightRecency + learnedWeightRecency*rec)
	}
	return weightRelevance*rel + weightEffectiveness*eff + weightRecency*rec
}

// Candidate is an insight that matched a query, with its raw BM25 and,
// in a hybrid recall (Hybrid), the cosine of its embedding and the
// query's (Semantic).
type Candidate struct {
	Insight  Insight
	BM25     float64
	Hybrid   bool
	Semantic float64
}

// relevance is the candidate's relevance given the best BM25 among the
// candidates: BM25 over the best's, blended with the cosine when hybrid.
func (c Candidate) relevance(best float64) float64 {
	rel := 0.0
	if best > 0 {
		rel = c.BM25 / best
	}
	if c.Hybrid {
		rel = (1-HybridWeight)*rel + HybridWeight*c.Semantic
	}
	return rel
}

// Ranked is a recalled insight with its score and the three parts.
type Ranked struct {
	Insight       Insight
	Score         float64
	Relevance     float64
	Effectiveness float64
	Recency       float64
	// Sunk: the learned mode put it last because it keeps failing.
	Sunk bool
}

// bests are the BM25s relevance is measured against: the best trusted
// candidate's for the trusted, the best of all for quarantined ones. A
// quarantined insight must not change what others see, so it takes no
// part in their relevance.
type bests struct{ trusted, all float64 }

func (b *bests) add(c Candidate) {
	b.all = max(b.all, c.BM25)
	if !c.Insight.Quarantined() {
		b.trusted = max(b.trusted, c.BM25)
	}
}

func (b bests) of(c Candidate) float64 {
	if c.Insight.Quarantined() {
		return b.all
	}
	return b.trusted
}

// Rank scores candidates and returns the best limit, best first;
// quarantined ones come after every trusted one, so they fill only the
// places trusted advice leaves, and ties go to the newer insight so the
// order is stable.
func Rank(mode RankMode, cands []Candidate, now time.Time, limit int) []Ranked {
	var best bests
	for _, c := range cands {
		best.add(c)
	}
	// Scores are sorted by index, and only the best limit become Ranked:
	// a candidate carries a whole insight, too big to move about.
	type scored struct {
		i                        int
		score, rel, eff, recency float64
		sunk, quarantined        bool
	}
	all := make([]scored, len(cands))
	for i, c := range cands {
		s := scored{i: i, eff: c.Insight.Stats.Effectiveness(mode), recency: Recency(c.Insight.Stats.LastUsed, c.Insight.CreatedAt, now)}
		s.rel = c.relevance(best.of(c))
		s.score = mode.score(s.rel, s.eff, s.recency)
		s.sunk = mode == RankLearned && c.Insight.Stats.Sinks()
		s.quarantined = c.Insight.Quarantined()
		all[i] = s
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.quarantined != b.quarantined {
			if a.quarantined {
				return 1
			}
			return -1
		}
		if a.sunk != b.sunk {
			if a.sunk {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(cands[b.i].Insight.ID, cands[a.i].Insight.ID)
	})
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]Ranked, len(all))
	for k, s := range all {
		out[k] = Ranked{Insight: cands[s.i].Insight, Score: s.score, Relevance: s.rel, Effectiveness: s.eff, Recency: s.recency, Sunk: s.sunk}
	}
	return out
}

// maxScore is the best score a candidate of this relevance can reach,
// with full effectiveness and recency (the same sum as Rank's, so it
// bounds Rank's score in floating point too).
func maxScore(mode RankMode, relevance float64) float64 {
	return mode.score(relevance, 1, 1)
}

// Match is a full-text match whose insight is not loaded yet: the
// store's key for it and its BM25, and whether the recall is hybrid (its
// cosine, unknown until loaded, may then be up to 1).
type Match struct {
	Doc    int64
	BM25   float64
	Hybrid bool
}

// RankMatches returns what Rank returns for every match a reader may
// see, loading only the matches that can still reach the top limit. It
// hands matches to load best BM25 first, in batches of 4·limit (16 at
// least) and then of half what it has loaded (few queries, however many
// match); load appends to dst the candidates among them the reader may
// see (current, in its scopes), BM25 set. Once the limit-th result so far
// is trusted, not sunk, and outscores maxScore of the next match's
// relevance, no match left can enter the top, so it stops. The best BM25
// of a trusted candidate a reader sees (trusted relevance's divisor) is in
// the first batch that yields one, so every trusted relevance is final
// when it is computed (a quarantined one that is not cannot reach the
// top: it ranks after the limit trusted results).
func RankMatches(mode RankMode, matches []Match, load func(dst []Candidate, ms []Match) ([]Candidate, error), now time.Time, limit int) ([]Ranked, error) {
	slices.SortFunc(matches, func(a, b Match) int {
		if c := cmp.Compare(b.BM25, a.BM25); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	first := max(4*limit, 16)
	var cands []Candidate
	var best bests
	for from := 0; from < len(matches); {
		to := min(from+max(first, from/2), len(matches))
		n := len(cands)
		var err error
		if cands, err = load(cands, matches[from:to]); err != nil {
			return nil, err
		}
		for _, c := range cands[n:] {
			best.add(c)
		}
		from = to
		if limit <= 0 || len(cands) < limit || from == len(matches) || best.trusted == 0 {
			continue
		}
		ranked := Rank(mode, cands, now, limit)
		last := ranked[limit-1]
		if !last.Sunk && !last.Insight.Quarantined() && maxScore(mode, Candidate{BM25: matches[from].BM25, Hybrid: matches[from].Hybrid, Semantic: 1}.relevance(best.trusted)) < last.Score {
			return ranked, nil
		}
	}
	return Rank(mode, cands, now, limit), nil
}

// FieldHits are one document's term counts as a full-text index reports
// them, per query term and per field (trigger, resolution, tags).
type FieldHits struct {
	// Len is the document's length in tokens, per field.
	Len []int
	// TF[t][f] is how often term t occurs in field f.
	TF [][]int
}

// CorpusStats are the index-wide counts BM25 needs.
type CorpusStats struct {
	Docs int
	// AvgLen is the mean length of each field.
	AvgLen []float64
	// DF[t][f] is how many documents hold term t in field f.
	DF [][]int
}

// BM25 sums each field's Okapi BM25 for the query's terms.
func BM25(c CorpusStats, d FieldHits) float64 {
	score := 0.0
	for t := range d.TF {
		for f := range d.TF[t] {
			tf := float64(d.TF[t][f])
			if tf == 0 || c.AvgLen[f] == 0 {
				continue
			}
			df := float64(c.DF[t][f])
			idf := math.Log(1 + (float64(c.Docs)-df+0.5)/(df+0.5))
			norm := 1 - bm25B + bm25B*float64(d.Len[f])/c.AvgLen[f]
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	return score
}

// stopwords carry no meaning for recall; dropping them keeps queries to
// the words that do.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be but by do for from has have if in into is it its of on or that the their then there these they this to was were what when where which while who will with you your not no can should must") {
		m[w] = true
	}
	return m
}()

// Terms splits text into lowercase words of letters and digits, without
// stopwords or repeats, in order of first appearance.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 2 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Similarity is the Jaccard overlap of two texts' terms, 0..1.
func Similarity(a, b string) float64 {
	ta, tb := Terms(a), Terms(b)
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	common := 0
	for _, t := range ta {
		if slices.Contains(tb, t) {
			common++
		}
	}
	return float64(common) / float64(len(ta)+len(tb)-common)
}

// InsightUse says how an injected insight reads to an agent.
type InsightUse string

const (
	UseConstraint InsightUse = "constraint"
	UseRisk       InsightUse = "risk"
	UseContext    InsightUse = "context"
	// UseUntrusted is a quarantined insight (Insight.Quarantined): shown
	// only when recalled, marked, until a person endorses it.
	UseUntrusted InsightUse = "untrusted"
)

// DefaultConstraintRelevance is the least relevance a constraint has
// unless memory.constraint_min_relevance says otherwise.
const DefaultConstraintRelevance = 0.5

// Use sorts a ranked insight: proven advice that is about the situation
// (relevance at least minRelevance) is a constraint, advice that fails (or
// describes a failure) a risk, the rest context — proven advice about
// something else included; a quarantined one is none of these, so it
// never constrains.
func (r Ranked) Use(minRelevance float64) InsightUse {
	switch {
	case r.Insight.Quarantined():
		return UseUntrusted
	case r.Insight.Type == InsightFailure || r.Effectiveness < riskBelow:
		return UseRisk
	case r.Effectiveness >= constraintFrom && r.Relevance >= minRelevance:
		return UseConstraint
	}
	return UseContext
}

// EstimateTokens is a rough token count (four bytes a token), enough to
// keep injected insights within a prompt budget.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }
