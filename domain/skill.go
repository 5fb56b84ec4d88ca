package domain

import (
	"encoding/json"
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
	// Version is the version serving calls; while no version works, the
	// newest one attempted. Every build, failed or not, has its own number.
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
	// Label is the label of the run that wrote its code: what it answers
	// carries it.
	Label Label `json:"label,omitzero"`
}

// ToolName is the MCP tool that calls this skill.
func (s Skill) ToolName() string { return SkillToolPrefix + s.Name }

// Skill templates: shell is busybox sh behind a static shim; python is the
// host's Debian python3 with its standard library. Both base images are
// built locally FROM scratch: neither needs a registry.
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
	// Examples are checked against the new version before it goes live.
	Examples  []SkillExample
	CreatedBy string
	// ByHuman is set when a human worker asked for the build: the bound on
	// consecutive failed builds stops AI workers only.
	ByHuman bool
}

// SkillExample is one input a skill must answer with exactly Output
// (compared as JSON: key order, spacing and number spelling aside).
type SkillExample struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// SkillVersionStatus is what became of one build of a skill.
type SkillVersionStatus string

const (
	// VersionOK built, was healthy and passed its examples; while it is not
	// the serving version it is a rollback target.
	VersionOK SkillVersionStatus = "ok"
	// VersionFailed did not build, start or pass an example; it never served.
	VersionFailed SkillVersionStatus = "failed"
	// VersionRolledBack served until rollback_skill took it down; it is
	// never a rollback target again.
	VersionRolledBack SkillVersionStatus = "rolled_back"
)

// SkillVersion is one build of a skill: its source as built, its build
// log and what became of it.
type SkillVersion struct {
	Name        string             `json:"name"`
	Version     int                `json:"version"`
	Status      SkillVersionStatus `json:"status"`
	Error       string             `json:"error,omitempty"`
	Description string             `json:"description"`
	InputSchema json.RawMessage    `json:"inputSchema"`
	Template    string             `json:"template,omitempty"`
	// Files is the whole build context as built (template files included),
	// by path; empty in listings.
	Files    map[string]string `json:"files,omitempty"`
	Examples []SkillExample    `json:"examples,omitempty"`
	// BuildLog is the end of the image build's output.
	BuildLog  string    `json:"buildLog,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	// Label is the label of the run that wrote its code.
	Label Label `json:"label,omitzero"`
}

var skillName = LazyRegexp(`^[a-z][a-z0-9_]{1,39}$`)

// ValidateSkillName keeps names usable in tool names, image tags and
// container names.
func ValidateSkillName(name string) error {
	if name == "" {
		return Required("name")
	}
	if !skillName().MatchString(name) {
		return Invalid("name", "%q must be 2-40 lowercase letters, digits or underscores, starting with a letter", name)
	}
	return nil
}
