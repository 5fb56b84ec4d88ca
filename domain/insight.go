package domain

import (
	"slices"
	"strings"
	"time"
)

// PrefixInsight starts every insight id.
const PrefixInsight = "i-"

// Size limits of an insight: advice is short, and every prompt it is
// injected into pays for its length.
const (
	MaxInsightText = 2 << 10
	maxInsightTags = 16
	maxInsightTag  = 64
)

// InsightType says what kind of advice an insight is.
type InsightType string

const (
	InsightPattern    InsightType = "pattern"
	InsightFailure    InsightType = "failure"
	InsightPreference InsightType = "preference"
	InsightFact       InsightType = "fact"
)

// InsightTypes lists the valid types.
var InsightTypes = []InsightType{InsightPattern, InsightFailure, InsightPreference, InsightFact}

// Validate rejects unknown types, naming the valid ones.
func (t InsightType) Validate(field string) error {
	if !slices.Contains(InsightTypes, t) {
		return EnumError(field, "insight type", t, InsightTypes)
	}
	return nil
}

// InsightScope is who may recall an insight: everyone, the holders of a
// role or a position, or one worker.
type InsightScope string

const (
	ScopeOrg      InsightScope = "org"
	ScopeRole     InsightScope = "role"
	ScopePosition InsightScope = "position"
	ScopeWorker   InsightScope = "worker"
)

// InsightScopes lists the valid scopes.
var InsightScopes = []InsightScope{ScopeOrg, ScopeRole, ScopePosition, ScopeWorker}

// Validate rejects unknown scopes, naming the valid ones.
func (sc InsightScope) Validate(field string) error {
	if !slices.Contains(InsightScopes, sc) {
		return EnumError(field, "insight scope", sc, InsightScopes)
	}
	return nil
}

// scopePrefix is the id prefix of each scope's target.
var scopePrefix = map[InsightScope]string{ScopeRole: PrefixRole, ScopePosition: PrefixPosition, ScopeWorker: PrefixWorker}

// ValidateTarget checks scope and its target together: org has none, the
// others name a role, position or worker id.
func (sc InsightScope) ValidateTarget(target string) error {
	if err := sc.Validate("scope"); err != nil {
		return err
	}
	prefix := scopePrefix[sc]
	switch {
	case sc == ScopeOrg && target != "":
		return Invalid("target", "an org insight has no target; omit it (got %q)", target)
	case sc != ScopeOrg && !strings.HasPrefix(target, prefix):
		return Invalid("target", "a %s insight needs the %s's id (%s…) as target; got %q", sc, sc, prefix, target)
	}
	return nil
}

// Seat of a worker as insight scopes see it: the scopes it belongs to.
type InsightSeat struct {
	Worker, Position, Role string
}

// Sees says whether a worker in seat may recall an insight of scope and
// target: org insights, and those of its own role, position or self.
func (s InsightSeat) Sees(sc InsightScope, target string) bool {
	switch sc {
	case ScopeOrg:
		return true
	case ScopeRole:
		return target == s.Role
	case ScopePosition:
		return target == s.Position
	case ScopeWorker:
		return target == s.Worker
	}
	return false
}

// Insight is a short piece of advice: in a situation (Trigger), do this
// (Resolution). A correction supersedes it with a new version; a
// superseded insight is never recalled again but stays in the history.
type Insight struct {
	ID         string
	Version    int
	Trigger    string
	Resolution string
	Type       InsightType
	Tags       []string
	Scope      InsightScope
	Target     string
	// StoredBy is the worker that stored it, in Activation (if a run).
	StoredBy   string
	Activation string
	// Supersedes is the previous version; SupersededBy the next one (empty
	// while current). Retired is a correction with no successor.
	Supersedes   string
	SupersededBy string
	Retired      bool
	Reason       string
	Stats        InsightStats
	CreatedAt    time.Time
	// Label is the storing run's: an untrusted one is quarantined until a
	// person endorses it (EndorsedBy, EndorsedAt), and readers limit who
	// may recall it.
	Label      Label
	EndorsedBy string
	EndorsedAt *time.Time
}

// Current says whether recall may return it.
func (in Insight) Current() bool { return in.SupersededBy == "" && !in.Retired }

// Quarantined says it was stored under untrusted integrity and no person
// has endorsed it: recall shows it marked, never as a constraint, and no
// prompt is given it unasked.
func (in Insight) Quarantined() bool { return in.Label.Untrusted }

// Text is what full-text relevance reads: trigger, resolution and tags.
func (in Insight) Text() string {
	return in.Trigger + " " + in.Resolution + " " + strings.Join(in.Tags, " ")
}

// InsightStats are the counters outcomes move.
type InsightStats struct {
	// Injected counts runs it was shown to; Utilized those that cited it.
	Injected, Utilized int
	// Helped and Failed count direct outcomes; the baseline formula reads
	// only these.
	Helped, Failed int
	// CreditHelped and CreditFailed are outcomes weighted by credit: its
	// own count 1, those of insights it led to count creditDecay^depth.
	CreditHelped, CreditFailed float64
	// LastUsed is when a run last utilized it (zero: never).
	LastUsed time.Time
}

// Validate checks what a caller fills.
func (in Insight) Validate() error {
	if err := firstErr(
		nonEmpty("trigger", in.Trigger), checkLen("trigger", in.Trigger, MaxInsightText),
		nonEmpty("resolution", in.Resolution), checkLen("resolution", in.Resolution, MaxInsightText),
		in.Type.Validate("type"), in.Scope.ValidateTarget(in.Target),
		checkCount("tags", len(in.Tags), maxInsightTags),
	); err != nil {
		return err
	}
	for i, t := range in.Tags {
		if t == "" || strings.ContainsAny(t, " \t\n") {
			return Invalid(indexed("tags", i), "a tag is one word without spaces; got %q", t)
		}
		if err := checkLen(indexed("tags", i), t, maxInsightTag); err != nil {
			return err
		}
	}
	return nil
}

func nonEmpty(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return Required(field)
	}
	return nil
}

// InsightOutcome is feedback on an insight a run was shown or used.
type InsightOutcome string

const (
	// OutcomeUtilized: the run used it; its result decides helped or failed.
	OutcomeUtilized InsightOutcome = "utilized"
	OutcomeHelped   InsightOutcome = "helped"
	OutcomeFailed   InsightOutcome = "failed"
)

// InsightOutcomes lists the valid outcomes.
var InsightOutcomes = []InsightOutcome{OutcomeUtilized, OutcomeHelped, OutcomeFailed}

// Validate rejects unknown outcomes.
func (o InsightOutcome) Validate(field string) error {
	if !slices.Contains(InsightOutcomes, o) {
		return EnumError(field, "outcome", o, InsightOutcomes)
	}
	return nil
}

// InsightLinkKind is why two insights are linked.
type InsightLinkKind string

const (
	// LinkSimilar joins insights whose text overlaps above the threshold.
	LinkSimilar InsightLinkKind = "similar"
	// LinkLedTo runs from an insight a run recalled to one the run stored.
	LinkLedTo InsightLinkKind = "led_to"
)

// InsightLinkKinds lists the valid kinds.
var InsightLinkKinds = []InsightLinkKind{LinkSimilar, LinkLedTo}

// Validate rejects unknown kinds.
func (k InsightLinkKind) Validate(field string) error {
	if !slices.Contains(InsightLinkKinds, k) {
		return EnumError(field, "link kind", k, InsightLinkKinds)
	}
	return nil
}

// InsightLink joins two insights; led_to is directed From → To.
type InsightLink struct {
	From, To string
	Kind     InsightLinkKind
	// Similarity is the text overlap (0..1) of a similar link.
	Similarity float64
}

// TagUserProvided marks an insight a reviewer gave in answer to a learn
// question. UserProvidedPrior is the credit it starts with, as if it had
// helped that often: a reviewer's answer starts as a constraint and must
// keep earning it.
const (
	TagUserProvided   = "user-provided"
	UserProvidedPrior = 2.0
)

// LearnQuestion is what the learn step asks a reviewer about one failed
// run, or one blocked or retried spec-task item: what should the worker do
// next time? The answer becomes an insight.
type LearnQuestion struct {
	ID         string
	Activation string
	Worker     string
	Reviewer   string
	// Situation is what the run was about, quoted from its triggers; it
	// becomes the trigger of the answer's insight.
	Situation string
	Error     string
	// Used are the insights the run cited.
	Used []string
	// Notice is the inbox event that asked; Insight the answer, once given.
	Notice  string
	Insight string
	AskedAt time.Time
	// Task and Item name the spec task item asked about, if it is one;
	// Activation is then its last run, if any.
	Task string
	Item int
}
