package helix

import "encoding/json"

// The shapes of Helix's API this runtime uses, as helixml/helix's server
// takes and returns them (api/pkg/types): only the fields read or sent.

// UserStatus is GET /api/v1/status: who the API key belongs to.
type UserStatus struct {
	Admin bool   `json:"admin"`
	User  string `json:"user"`
	Slug  string `json:"slug,omitempty"`
}

// Model is one entry of GET /v1/models?provider=….
type Model struct {
	ID      string `json:"id"`
	Enabled bool   `json:"enabled,omitempty"`
}

// ProjectApplyRequest is PUT /api/v1/projects/apply's body: create the
// project named Name, or update it, with an agent app of Spec.Agent.
type ProjectApplyRequest struct {
	OrganizationID string      `json:"organization_id"`
	Name           string      `json:"name"`
	Spec           ProjectSpec `json:"spec"`
}

// ProjectSpec is the declarative part of a project.
type ProjectSpec struct {
	Description string     `json:"description,omitempty"`
	Agent       *AgentSpec `json:"agent,omitempty"`
}

// AgentSpec is the project's agent app: its code agent and model.
type AgentSpec struct {
	Name     string `json:"name,omitempty"`
	Runtime  string `json:"runtime,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// ProjectApplyResponse is what PUT /api/v1/projects/apply answers.
type ProjectApplyResponse struct {
	ProjectID  string `json:"project_id"`
	AgentAppID string `json:"agent_app_id,omitempty"`
	Created    bool   `json:"created"`
}

// Project is GET /api/v1/projects/{id}.
type Project struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	OrganizationID string `json:"organization_id"`
	DefaultRepoID  string `json:"default_repo_id"`
}

// RepoCreateRequest is POST /api/v1/git/repositories's body; InitialFiles
// seed the default branch, so that it exists for helix-specs to fork from.
type RepoCreateRequest struct {
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	RepoType       string            `json:"repo_type"`
	OwnerID        string            `json:"owner_id"`
	OrganizationID string            `json:"organization_id,omitempty"`
	ProjectID      string            `json:"project_id,omitempty"`
	InitialFiles   map[string]string `json:"initial_files,omitempty"`
	DefaultBranch  string            `json:"default_branch,omitempty"`
}

// Repo is a Helix-hosted git repository.
type Repo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	DefaultBranch string `json:"default_branch"`
}

// BranchRequest is POST /api/v1/git/repositories/{id}/branches's body.
type BranchRequest struct {
	BranchName string `json:"branch_name"`
	BaseBranch string `json:"base_branch,omitempty"`
}

// FileRequest is PUT /api/v1/git/repositories/{id}/contents's body: one
// file committed on Branch, its Content base64.
type FileRequest struct {
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Message string `json:"message"`
	Author  string `json:"author"`
	Email   string `json:"email"`
	Content string `json:"content"`
}

// File is GET /api/v1/git/repositories/{id}/contents's answer.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// App is GET /api/v1/apps/{id}: its config is kept raw, so that a
// round trip through this runtime loses nothing Helix put there.
type App struct {
	ID             string          `json:"id"`
	OrganizationID string          `json:"organization_id,omitempty"`
	Config         json.RawMessage `json:"config"`
}

// AppMCP is one MCP server of an app's assistant (types.AssistantMCP).
type AppMCP struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Transport   string            `json:"transport,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
}

// Secret is a secret as Helix lists it (never with its value).
type Secret struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	AppID string `json:"app_id"`
}

// SecretRequest creates or updates a secret (types.CreateSecretRequest).
type SecretRequest struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	AppID string `json:"app_id"`
}

// ChatRequest is POST /api/v1/sessions/chat's body
// (types.SessionChatRequest): a new session on AppID when SessionID is
// empty.
type ChatRequest struct {
	AppID          string        `json:"app_id"`
	ProjectID      string        `json:"project_id"`
	OrganizationID string        `json:"organization_id"`
	SessionID      string        `json:"session_id"`
	Stream         bool          `json:"stream"`
	SessionRole    string        `json:"session_role,omitempty"`
	Type           string        `json:"type"`
	AgentType      string        `json:"agent_type"`
	Provider       string        `json:"provider"`
	Model          string        `json:"model"`
	Messages       []ChatMessage `json:"messages"`
}

// ChatMessage is one message of a chat request (types.Message).
type ChatMessage struct {
	Role    string      `json:"role"`
	Content ChatContent `json:"content"`
}

// ChatContent is a message's content (types.MessageContent).
type ChatContent struct {
	ContentType string   `json:"content_type"`
	Parts       []string `json:"parts"`
}

// ChatChunk is one server-sent event of a streamed chat: an OpenAI chat
// completion chunk whose id is the session's, or an error.
type ChatChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason,omitempty"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// MessageRequest is POST /api/v1/sessions/{id}/messages's body: a
// prompt Helix keeps until the session's agent takes it.
type MessageRequest struct {
	Content   string `json:"content"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

// MessageResponse is what that endpoint answers.
type MessageResponse struct {
	PromptID string `json:"prompt_id"`
}

// Output is GET /api/v1/sessions/{id}/output: the state and text of the
// session's last interaction.
type Output struct {
	SessionID     string `json:"session_id"`
	InteractionID string `json:"interaction_id,omitempty"`
	Status        string `json:"status"`
	Output        string `json:"output"`
}

// Done says the interaction has ended, one way or another.
func (o Output) Done() bool {
	switch o.Status {
	case "complete", "error", "interrupted":
		return true
	}
	return false
}
