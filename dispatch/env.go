package dispatch

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helixml/helix-org/domain"
)

//go:embed agent.md
var defaultPolicy string

// project writes the store's view of a worker into its environment
// directory: role.md, identity.md, agent.md and mcp.json. Files are
// rewritten on every activation, so a live role edit is always seen. None
// holds a secret: mcp.json refers to the token by its variable, and the
// runtime hands the run its token in the environment.
func (d *Dispatcher) project(ctx context.Context, w domain.Worker) (string, error) {
	pos, err := d.st.GetPosition(ctx, w.PositionID)
	if err != nil {
		return "", err
	}
	role, err := d.st.GetRole(ctx, pos.RoleID)
	if err != nil {
		return "", err
	}
	policy, _ := d.st.SettingOr(ctx, PolicySetting)
	if policy == "" {
		policy = defaultPolicy
	}
	// Absolute: the workspace's path in the run's environment must name
	// the same directory from the agent's working directory.
	dir, err := filepath.Abs(filepath.Join(d.opts.EnvsDir, w.ID))
	if err != nil {
		return "", fmt.Errorf("env dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create env dir: %w", err)
	}
	files := RoleFiles(w, pos, role)
	files["agent.md"] = policy
	for name, content := range files {
		if err := writePrivate(filepath.Join(dir, name), []byte(content)); err != nil {
			return "", err
		}
	}
	if err := writePrivate(filepath.Join(dir, "mcp.json"), domain.MCPConfig()); err != nil {
		return "", err
	}
	return dir, nil
}

// RoleFiles are the role.md and identity.md a run of w is given: the
// helix runtime pushes the same files to its workers' repositories.
func RoleFiles(w domain.Worker, pos domain.Position, role domain.Role) map[string]string {
	return map[string]string{
		"role.md":     role.Content,
		"identity.md": fmt.Sprintf("# %s\n\nWorker id: %s\nPosition: %s (%s)\nRole: %s (%s)\n\n%s\n", w.Name, w.ID, pos.Title, pos.ID, role.Title, role.ID, w.Identity),
	}
}

// writePrivate writes a file with mode 0600: a role may still be private
// to its worker. A plain rewrite suffices: only this worker's one running
// activation reads it.
func writePrivate(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
