package domain

import "path/filepath"

// A Workspace is an AI worker's persistent git working tree: a
// repository of its own, or a checkout of a repository attached to it,
// on the branch WorkspaceBranch. It lives in the worker's environment
// directory, so the sandbox and the container see it at one path on
// every run; the server commits what a run changed after the run.
type Workspace struct {
	WorkerID string `json:"worker"`
	// URL is the attached repository (spec-task URL rules); empty for a
	// repository of the worker's own.
	URL string `json:"url,omitempty"`
	// Base is the attached repository's branch the work starts from.
	Base string `json:"base,omitempty"`
	// Forge (github or gitlab) and Project (owner/repo, or GitLab's
	// group/project path) are where open_pull_request opens one.
	Forge   string `json:"forge,omitempty"`
	Project string `json:"project,omitempty"`
	// Branch is the worker's branch in the workspace.
	Branch string `json:"branch"`
	// Source is the server's clone of URL the checkout is made from.
	Source string `json:"-"`
	// Dir is the working tree on the host once a run prepared it; empty
	// until then, or after an attach or detach that the next run applies.
	Dir string `json:"dir,omitempty"`
	// Head is the commit the branch was at after the last run.
	Head string `json:"head,omitempty"`
	// Prepared is the Attachment Dir was made for: a run that read the
	// workspace before an attach or detach records what it prepared, and
	// the next run sees that it is not what is attached now.
	Prepared string `json:"-"`
	// Label is the join of the labels of the runs whose changes it holds:
	// what a run starts from when it may read the workspace's files.
	Label Label `json:"label,omitzero"`
}

// Attachment names what is attached (URL and base), "" for none.
func (w Workspace) Attachment() string {
	if w.URL == "" {
		return ""
	}
	return w.URL + "#" + w.Base
}

// Current reports whether Dir is a checkout of what is attached now.
func (w Workspace) Current() bool { return w.Dir != "" && w.Prepared == w.Attachment() }

// WorkspaceEnv is the variable that tells an agent where its workspace is.
const WorkspaceEnv = "HELIX_ORG_WORKSPACE"

// WorkspaceDir is the workspace inside a worker's environment directory.
func WorkspaceDir(envDir string) string { return filepath.Join(envDir, "workspace") }

// WorkspaceBranch is the branch a worker works on in its workspace.
func WorkspaceBranch(worker string) string { return "helix/" + worker }
