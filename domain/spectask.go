package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// PrefixTask names spec tasks: "t-…".
const PrefixTask = "t-"

// taskStreamPrefix + the task id's slug is the task's own stream, where
// every transition of the task is told.
const taskStreamPrefix = "s-task-"

// TaskStream is the id of a task's stream: t-login → s-task-login.
func TaskStream(task string) string { return taskStreamPrefix + strings.TrimPrefix(task, PrefixTask) }

// TaskState is where a spec task is in its life.
type TaskState string

// The states of a spec task, in the order a task normally passes them.
const (
	TaskBacklog              TaskState = "backlog"
	TaskExploration          TaskState = "exploration"
	TaskSpecGeneration       TaskState = "spec_generation"
	TaskSpecReview           TaskState = "spec_review"
	TaskSpecRevision         TaskState = "spec_revision"
	TaskSpecApproved         TaskState = "spec_approved"
	TaskImplementationQueued TaskState = "implementation_queued"
	TaskImplementation       TaskState = "implementation"
	TaskImplementationReview TaskState = "implementation_review"
	TaskDone                 TaskState = "done"
	TaskBlocked              TaskState = "blocked"
	TaskCancelled            TaskState = "cancelled"
)

// TaskStates lists every state, for enums and errors.
var TaskStates = []TaskState{TaskBacklog, TaskExploration, TaskSpecGeneration, TaskSpecReview, TaskSpecRevision, TaskSpecApproved,
	TaskImplementationQueued, TaskImplementation, TaskImplementationReview, TaskDone, TaskBlocked, TaskCancelled}

// TaskAction is what moves a task from one state to the next.
type TaskAction string

// The actions on a spec task. The server takes most of them itself (start,
// queue, implement, finish); people and agents take the others through tools.
const (
	ActStart          TaskAction = "start"
	ActExplore        TaskAction = "explore"
	ActSubmitSpec     TaskAction = "submit_spec"
	ActApprove        TaskAction = "approve"
	ActRequestChanges TaskAction = "request_changes"
	ActQueue          TaskAction = "queue"
	ActImplement      TaskAction = "implement"
	ActFinish         TaskAction = "finish"
	ActBlock          TaskAction = "block"
	ActResume         TaskAction = "resume"
	ActCancel         TaskAction = "cancel"
)

// taskMoves is the state machine: the actions each state allows and where
// they lead. block and cancel are added to every state that is not final.
var taskMoves = map[TaskState]map[TaskAction]TaskState{
	TaskBacklog:              {ActStart: TaskSpecGeneration, ActExplore: TaskExploration},
	TaskExploration:          {ActStart: TaskSpecGeneration},
	TaskSpecGeneration:       {ActSubmitSpec: TaskSpecReview},
	TaskSpecReview:           {ActApprove: TaskSpecApproved, ActRequestChanges: TaskSpecRevision},
	TaskSpecRevision:         {ActSubmitSpec: TaskSpecReview},
	TaskSpecApproved:         {ActQueue: TaskImplementationQueued},
	TaskImplementationQueued: {ActImplement: TaskImplementation},
	TaskImplementation:       {ActFinish: TaskImplementationReview},
	TaskImplementationReview: {ActApprove: TaskDone, ActRequestChanges: TaskImplementation},
	TaskBlocked:              {ActResume: TaskImplementation},
	TaskDone:                 {},
	TaskCancelled:            {},
}

// Final reports whether nothing can happen to a task in this state.
func (s TaskState) Final() bool { return s == TaskDone || s == TaskCancelled }

// Allowed lists the actions a task in this state accepts, in a fixed order.
func (s TaskState) Allowed() []TaskAction {
	var out []TaskAction
	for _, a := range []TaskAction{ActStart, ActExplore, ActSubmitSpec, ActApprove, ActRequestChanges, ActQueue, ActImplement, ActFinish, ActResume} {
		if _, ok := taskMoves[s][a]; ok {
			out = append(out, a)
		}
	}
	if _, known := taskMoves[s]; known && !s.Final() {
		if s != TaskBlocked {
			out = append(out, ActBlock)
		}
		out = append(out, ActCancel)
	}
	return out
}

// Next is the state action leads to, or an ErrConflict naming the state and
// the actions it allows, so a caller can see what it may do instead.
func (s TaskState) Next(a TaskAction) (TaskState, error) {
	if next, ok := taskMoves[s][a]; ok {
		return next, nil
	}
	if slices.Contains(s.Allowed(), a) {
		if a == ActCancel {
			return TaskCancelled, nil
		}
		return TaskBlocked, nil
	}
	allowed := "none, the task is finished"
	if acts := s.Allowed(); len(acts) > 0 {
		allowed = quoteList(acts)
	}
	return s, fmt.Errorf("%w: a task in state %q does not allow %q (allowed: %s)", ErrConflict, s, a, allowed)
}

// DefaultTaskParallel is how many items of one task are worked at once when
// the task does not say.
const DefaultTaskParallel = 2

// MaxStallAttempts is how often the planner re-plans around one blocked
// item before the task is aborted (blocked) and the reviewer asked.
const MaxStallAttempts = 3

// Stall steps: what became of a stalled item, each an event on the
// task's stream. The planner re-plans or skips it; after
// MaxStallAttempts re-plans along one line the server aborts.
const (
	StallAsked  = "stalled"
	StallReplan = "replan"
	StallSkip   = "skip"
	StallAbort  = "abort"
)

// SpecTask is a piece of project work: a prompt turned into a reviewed
// design, then into items that builders work in dependency order.
type SpecTask struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Prompt   string    `json:"prompt"`
	Priority int       `json:"priority"`
	State    TaskState `json:"state"`
	// Repo is a local git repository the design docs live beside; empty
	// keeps the documents in the store.
	Repo string `json:"repo,omitempty"`
	// Origin is the URL Repo was cloned from, when the task was given one;
	// the design-docs branch is pushed back there.
	Origin   string `json:"origin,omitempty"`
	Planner  string `json:"planner"`
	Reviewer string `json:"reviewer"`
	// Builders are the workers items are handed to.
	Builders []string `json:"builders"`
	// Explorers explore an existing repository before the planner plans:
	// each takes a partition of it. Empty: the builders do.
	Explorers []string `json:"explorers,omitempty"`
	// Parallel caps how many items are in progress at once.
	Parallel int `json:"parallel"`
	// PullRequests says when the server opens pull requests from the
	// builders' workspaces: per delivered item, once per task, or never.
	PullRequests PullRequestMode `json:"pullRequests,omitempty"`
	// Revisions counts specs sent back by the reviewer.
	Revisions int       `json:"revisions"`
	Comments  string    `json:"comments,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Validate checks what a new task must have.
func (t SpecTask) Validate() error {
	if t.ID != "" {
		if err := ValidateID("id", PrefixTask, t.ID); err != nil {
			return err
		}
	}
	switch {
	case strings.TrimSpace(t.Title) == "":
		return Required("title")
	case strings.TrimSpace(t.Prompt) == "":
		return Required("prompt")
	case t.Planner == "":
		return Required("planner")
	case len(t.Builders) == 0:
		return Required("builders")
	case len(t.Explorers) > MaxExplorers:
		return Invalid("explorers", "at most %d explorers; got %d", MaxExplorers, len(t.Explorers))
	case t.Parallel < 0:
		return Invalid("parallel", "must be at least 1, got %d", t.Parallel)
	case t.PullRequests != "" && !slices.Contains(PullRequestModes, t.PullRequests):
		return EnumError("pullRequests", "pull request mode", t.PullRequests, PullRequestModes)
	}
	return nil
}

// TaskDocs are a task's documents, as they are in git or in the store.
type TaskDocs struct {
	Requirements string `json:"requirements"`
	Design       string `json:"design,omitempty"`
	Progress     string `json:"progress,omitempty"`
	// Label is the join of the labels of whoever wrote them.
	Label Label `json:"label,omitzero"`
}
