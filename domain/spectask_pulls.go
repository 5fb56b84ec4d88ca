package domain

// PullRequestMode says when the server opens pull requests for a spec
// task's work, from each builder's workspace branch.
type PullRequestMode string

// The pull request modes of a spec task.
const (
	// PullRequestsNone opens none; builders may still call open_pull_request.
	PullRequestsNone PullRequestMode = "none"
	// PullRequestsItem opens one when a builder reports an item delivered.
	PullRequestsItem PullRequestMode = "item"
	// PullRequestsTask opens one when the task's last item is delivered.
	PullRequestsTask PullRequestMode = "task"
)

// PullRequestModes lists the modes, for enums and errors.
var PullRequestModes = []PullRequestMode{PullRequestsNone, PullRequestsItem, PullRequestsTask}

// ItemPullRequest is the pull request (GitHub) or merge request (GitLab)
// the server opened for an item; review comments and check results on it
// are routed to the task's stream and wake the item's builder.
type ItemPullRequest struct {
	// Forge is "github" or "gitlab".
	Forge string `json:"forge"`
	// Project is the repository's owner/name (GitLab: its path or id).
	Project string `json:"project"`
	// Number is the pull request's number (GitLab: the merge request's iid).
	Number int    `json:"number"`
	URL    string `json:"url"`
	Head   string `json:"head"`
}
