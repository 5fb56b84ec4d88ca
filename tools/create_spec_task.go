package tools

import (
	"context"
	"fmt"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/designdocs"
)

type createSpecTaskIn struct {
	ID           string   `json:"id,omitempty" jsonschema:"the task's id (t-…); by default derived from title"`
	Title        string   `json:"title" jsonschema:"the task's title"`
	Prompt       string   `json:"prompt" jsonschema:"what is to be built, as the planner reads it"`
	Priority     int      `json:"priority,omitempty" jsonschema:"higher is handed to builders first; default 0"`
	Repo         string   `json:"repo,omitempty" jsonschema:"a git repository for the documents: a local path, or an https://, http:// or file:// URL the server clones"`
	Planner      string   `json:"planner" jsonschema:"the worker that writes the spec (w-…)"`
	Builders     []string `json:"builders" jsonschema:"the workers items are handed to (w-…)"`
	Explorers    []string `json:"explorers,omitempty" jsonschema:"the workers (w-…) that explore an existing repository first, each a partition of it; default: the builders. A repository with no files is not explored"`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"the worker that approves the spec and the work (w-…); by default the owner"`
	Parallel     int      `json:"parallel,omitempty" jsonschema:"how many items are worked at once; default 2"`
	PullRequests string   `json:"pullRequests,omitempty" jsonschema:"when the server opens a pull request from a builder's workspace branch: item (each delivered item), task (when the last item is delivered) or none (default)"`
	Schedule     string   `json:"schedule,omitempty" jsonschema:"a cron expression (minute hour day-of-month month day-of-week, e.g. 0 9 * * 1 for Mondays at 9): instead of one task now, start a new task from the same prompt at each occurrence, skipping one while the last task is still open"`
	Timezone     string   `json:"timezone,omitempty" jsonschema:"the IANA zone the schedule runs in, e.g. Europe/London; default UTC"`
}

type createSpecTaskOut struct {
	Task  string           `json:"task,omitempty" jsonschema:"the task started, when there is no schedule"`
	State domain.TaskState `json:"state,omitempty"`
	// Recurring is set when the call made a schedule instead of a task.
	Recurring *store.Recurrence `json:"recurring,omitempty" jsonschema:"the schedule stream whose ticks start the task anew"`
}

func createSpecTask() Tool {
	return define("create_spec_task", "Start a spec task: explorers map an existing repository, the planner writes a spec, the reviewer approves it, the builders build its items. With a schedule, start one anew at each occurrence instead.",
		func(ctx context.Context, env *Env, in createSpecTaskIn) (createSpecTaskOut, error) {
			var origin string
			if in.Repo != "" {
				top, url, err := designdocs.Resolve(ctx, in.Repo, remote(ctx, env))
				if err != nil {
					return createSpecTaskOut{}, err
				}
				in.Repo, origin = top, url
			}
			spec := domain.SpecTask{ID: in.ID, Title: in.Title, Prompt: in.Prompt,
				Priority: in.Priority, Repo: in.Repo, Origin: origin, Planner: in.Planner, Builders: in.Builders, Explorers: in.Explorers, Reviewer: in.Reviewer, Parallel: in.Parallel,
				PullRequests: domain.PullRequestMode(in.PullRequests)}
			if in.Schedule != "" {
				rec, err := env.Store.CreateRecurringSpecTask(ctx, env.Caller, spec, in.Schedule, in.Timezone)
				return createSpecTaskOut{Recurring: &rec}, err
			}
			if in.Timezone != "" {
				return createSpecTaskOut{}, domain.Invalid("timezone", "is the zone of a schedule; give schedule too, or leave timezone out")
			}
			start, err := exploreStart(ctx, env, spec)
			if err != nil {
				return createSpecTaskOut{}, err
			}
			t, err := env.Store.StartSpecTask(ctx, env.Caller, spec, start)
			if err != nil {
				return createSpecTaskOut{}, err
			}
			return createSpecTaskOut{Task: t.ID, State: t.State}, pushDocs(ctx, env, t.ID, "requirements of "+t.ID, nil)
		}, enum("pullRequests", domain.PullRequestModes)).annotated("Create spec task", openWorld)
}

// SpecExploreBudgetSetting is the tool calls each explorer is asked to
// stay within.
var SpecExploreBudgetSetting = domain.SettingSpec{Key: "spec_tasks.explore_budget", Type: domain.SettingInt, Default: fmt.Sprint(domain.DefaultExploreBudget),
	Description: "Most tool calls each explorer of a spec task's repository is asked to spend on its partition."}

// exploreStart partitions the task's repository among its explorers (its
// builders when none are named); a task without a repository, or on one
// with no files, starts planning at once.
func exploreStart(ctx context.Context, env *Env, t domain.SpecTask) (store.TaskStart, error) {
	if t.Repo == "" {
		return store.TaskStart{}, nil
	}
	files, err := designdocs.TrackedFiles(ctx, t.Repo)
	if err != nil {
		return store.TaskStart{}, err
	}
	explorers := t.Explorers
	if len(explorers) == 0 {
		explorers = t.Builders
	}
	budget := env.Store.IntSetting(ctx, SpecExploreBudgetSetting)
	parts := domain.PartitionRepo(files, explorers, int(max(budget, 1)))
	return store.TaskStart{Parts: parts, Greenfield: len(files) == 0}, nil
}
