package domain

import (
	"encoding/json"
	"regexp"
	"time"
)

// SkillStatus is where a skill's service is in its life.
type SkillStatus string

const (
	// SkillReady means the container is running and answered /health.
	SkillReady SkillStatus = "ready"
	// SkillStopped means the container was stopped (idle, or at shutdown);
	// the next call starts it again.
	SkillStopped SkillStatus = "stopped"
	// SkillFailed means no working version exists; Error says why.
	SkillFailed SkillStatus = "failed"
)

// SkillToolPrefix names the per-skill MCP tool: skill_<name>.
const SkillToolPrefix = "skill_"

// Skill is a capability an agent built: an image serving POST /execute,
// run as a container and offered to workers as the tool skill_<name>.
type Skill struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Template is the template the skill was built from, if any.
	Template string `json:"template,omitempty"`
	// Version counts successful and failed builds; the record describes
	// the newest version that was attempted.
	Version   int         `json:"version"`
	Image     string      `json:"image,omitempty"`
	Container string      `json:"container,omitempty"`
	Status    SkillStatus `json:"status"`
	Error     string      `json:"error,omitempty"`
	CreatedBy string      `json:"createdBy"`
	CreatedAt time.Time   `json:"createdAt"`
	UpdatedAt time.Time   `json:"updatedAt"`
	// LastUsedAt is the last call; idle skills are stopped some time after it.
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

// ToolName is the MCP tool that calls this skill.
func (s Skill) ToolName() string { return SkillToolPrefix + s.Name }

// Skill templates: shell needs no registry (busybox and a shim FROM
// scratch); python builds FROM python:3-slim, for real deployments.
const (
	SkillTemplateShell  = "shell"
	SkillTemplatePython = "python"
)

// SkillTemplates lists the templates create_skill accepts.
var SkillTemplates = []string{SkillTemplateShell, SkillTemplatePython}

// SkillSpec is what an agent hands in to create (or rebuild) a skill:
// either Files with a Dockerfile, or a Template plus Handler code.
type SkillSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	Template    string
	Handler     string
	Files       map[string]string
	CreatedBy   string
}

var skillName = regexp.MustCompile(`^[a-z][a-z0-9_]{1,39}$`)

// ValidateSkillName keeps names usable in tool names, image tags and
// container names.
func ValidateSkillName(name string) error {
	if name == "" {
		return Required("name")
	}
	if !skillName.MatchString(name) {
		return Invalid("name", "%q must be 2-40 lowercase letters, digits or underscores, starting with a letter", name)
	}
	return nil
}
