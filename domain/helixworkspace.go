package domain

import "time"

// HelixWorkspace is what the helix runtime made for one worker on a Helix
// control plane: its project, the project's agent app and git repository,
// and the chat session its activations share. SpecsSum is the digest of
// the role and identity last pushed to the repository's helix-specs
// branch, so an edit is pushed once and an unchanged role never is.
type HelixWorkspace struct {
	WorkerID  string    `json:"workerId"`
	ProjectID string    `json:"projectId"`
	AppID     string    `json:"appId"`
	RepoID    string    `json:"repoId"`
	SessionID string    `json:"sessionId,omitempty"`
	SpecsSum  string    `json:"specsSum,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}
