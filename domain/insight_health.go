package domain

// MemoryHealth summarises the insight memory: what it holds, what needs a
// look, and whether the loop that teaches it is turning.
type MemoryHealth struct {
	// Current insights (not superseded or retired), by type and scope.
	Current int                  `json:"current"`
	ByType  map[InsightType]int  `json:"byType"`
	ByScope map[InsightScope]int `json:"byScope"`
	// Versions by state: current, superseded, retired.
	ByState map[string]int `json:"byState"`
	// Stale: current and unused for the dormancy period (never used:
	// since stored). Contested: at least ContestedEach direct outcomes
	// each way. Quarantined: stored under untrusted integrity and not
	// endorsed. Sunk: the learned ranking puts them last.
	Stale       int            `json:"stale"`
	Contested   int            `json:"contested"`
	Quarantined int            `json:"quarantined"`
	Sunk        int            `json:"sunk"`
	Feedback    MemoryFeedback `json:"feedback"`
}

// MemoryFeedback is how much the loop hears: runs shown insights, how
// many cited one, the outcomes that credited them by source, and votes.
type MemoryFeedback struct {
	RunsShown  int `json:"runsShown"`
	RunsCiting int `json:"runsCiting"`
	// CiteRate is RunsCiting / RunsShown (0 when none was shown).
	CiteRate float64 `json:"citeRate"`
	// Outcomes counts the runs with an outcome by its source (run, item,
	// approval, rating) and value; HelpedRate is the share that helped.
	Outcomes   []OutcomeCount `json:"outcomes"`
	HelpedRate float64        `json:"helpedRate"`
	Votes      int            `json:"votes"`
	Voters     int            `json:"voters"`
}

// OutcomeCount is how many runs have an outcome of this source and value.
type OutcomeCount struct {
	Source  OutcomeSource  `json:"source"`
	Outcome InsightOutcome `json:"outcome"`
	Runs    int            `json:"runs"`
}

// ContestedEach is how many direct outcomes each way make an insight
// contested: people or runs disagree about it.
const ContestedEach = 2
