package helix

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/helixml/helix-org/domain"
)

// Names this runtime gives things on Helix.
const (
	// SpecsBranch holds each worker's role and identity, under
	// workers/<id>/.context/, where Helix's agents look for specs.
	SpecsBranch = "helix-specs"
	// MCPName is the worker's helix-org MCP server on its agent app.
	MCPName = "helix-org"
	// TokenSecret is the app's secret holding the run's token: Helix
	// substitutes it for ${HELIX_ORG_TOKEN} in the app's config, where
	// the MCP server's Authorization header names it.
	TokenSecret = "HELIX_ORG_TOKEN"
	// codeAgent is the agent each app runs: Helix's own (zed_agent), which
	// calls the configured provider and model through Helix.
	codeAgent = "zed_agent"
	// agentType is the kind of session a chat opens: a desktop agent.
	agentType   = "zed_external"
	sessionRole = "exploratory"
)

// ensure returns the worker's project, app and repository on Helix,
// making what is missing: on its first run (the hire's), all three. Each
// step is recorded as it is made, so a run cut short resumes where it
// stopped and never makes a second project.
func (r *Runtime) ensure(ctx context.Context, run domain.Run) (domain.HelixWorkspace, error) {
	ws, err := r.host.Store.HelixWorkspace(ctx, run.WorkerID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return ws, err
	}
	ws.WorkerID = run.WorkerID
	if ws.ProjectID == "" || ws.AppID == "" {
		if ws, err = r.applyProject(ctx, run, ws); err != nil {
			return ws, err
		}
	}
	if ws.RepoID == "" {
		if ws, err = r.createRepo(ctx, run, ws); err != nil {
			return ws, err
		}
	}
	return ws, nil
}

func (r *Runtime) applyProject(ctx context.Context, run domain.Run, ws domain.HelixWorkspace) (domain.HelixWorkspace, error) {
	role, err := r.host.RoleOf(ctx, run.WorkerID)
	if err != nil {
		return ws, err
	}
	resp, err := r.client.ApplyProject(ctx, ProjectApplyRequest{OrganizationID: r.cfg.Organization, Name: run.WorkerID, Spec: ProjectSpec{
		Description: fmt.Sprintf("helix-org worker %s (role %s)", run.WorkerID, role.ID),
		Agent:       &AgentSpec{Name: run.WorkerID, Runtime: codeAgent, Provider: r.cfg.Provider, Model: r.cfg.Model},
	}})
	if err != nil {
		return ws, fmt.Errorf("create the Helix project of %s: %w", run.WorkerID, err)
	}
	if resp.AgentAppID == "" {
		return ws, fmt.Errorf("create the Helix project of %s: Helix made project %s without an agent app", run.WorkerID, resp.ProjectID)
	}
	ws.ProjectID, ws.AppID = resp.ProjectID, resp.AgentAppID
	note(run, fmt.Sprintf("Helix project %s with agent app %s (%s/%s)", ws.ProjectID, ws.AppID, r.cfg.Provider, r.cfg.Model))
	return ws, r.host.Store.PutHelixWorkspace(ctx, ws)
}

// createRepo makes the worker's repository, seeded so that its default
// branch exists, and attaches it to the project as its primary one.
func (r *Runtime) createRepo(ctx context.Context, run domain.Run, ws domain.HelixWorkspace) (domain.HelixWorkspace, error) {
	me, err := r.client.WhoAmI(ctx)
	if err != nil {
		return ws, fmt.Errorf("who the Helix key is, to own %s's repository: %w", run.WorkerID, err)
	}
	repo, err := r.client.CreateRepo(ctx, RepoCreateRequest{Name: run.WorkerID, Description: "Workspace of helix-org worker " + run.WorkerID,
		RepoType: "code", OwnerID: me.User, OrganizationID: r.cfg.Organization, ProjectID: ws.ProjectID, DefaultBranch: "main",
		InitialFiles: map[string]string{"README.md": "# " + run.WorkerID + "\n\nWorkspace of a helix-org worker. Its role and identity are on the " +
			SpecsBranch + " branch, under workers/" + run.WorkerID + "/.context/.\n"}})
	if err != nil {
		return ws, fmt.Errorf("create the Helix repository of %s: %w", run.WorkerID, err)
	}
	if err := r.client.AttachRepo(ctx, ws.ProjectID, repo.ID); err != nil {
		return ws, fmt.Errorf("attach repository %s to project %s: %w", repo.ID, ws.ProjectID, err)
	}
	ws.RepoID = repo.ID
	note(run, fmt.Sprintf("Helix repository %s attached to project %s", repo.ID, ws.ProjectID))
	return ws, r.host.Store.PutHelixWorkspace(ctx, ws)
}

// specNames are the files of a run's directory pushed to helix-specs.
var specNames = []string{"role.md", "identity.md"}

// runSpecs are the role and identity the dispatcher wrote for the run.
func runSpecs(run domain.Run) (map[string]string, error) {
	files := map[string]string{}
	for _, name := range specNames {
		b, err := os.ReadFile(filepath.Join(run.EnvDir, name))
		if err != nil {
			return nil, fmt.Errorf("read the run's %s: %w", name, err)
		}
		files[name] = string(b)
	}
	return files, nil
}

// specsSum is the digest of a worker's spec files as they are pushed.
func specsSum(files map[string]string) string {
	h := sha256.New()
	for _, name := range specNames {
		fmt.Fprintf(h, "%s %d\n%s", name, len(files[name]), files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pushSpecs puts a worker's role and identity on the helix-specs branch
// of its repository, under workers/<id>/.context/, when they differ from
// what was pushed last, and records what it pushed. It reports whether
// it pushed.
func pushSpecs(ctx context.Context, cl *Client, st Store, ws *domain.HelixWorkspace, files map[string]string) (bool, error) {
	sum := specsSum(files)
	if sum == ws.SpecsSum {
		return false, nil
	}
	branches, err := cl.Branches(ctx, ws.RepoID)
	if err != nil {
		return false, fmt.Errorf("list the branches of %s: %w", ws.RepoID, err)
	}
	if !slices.Contains(branches, SpecsBranch) {
		if err := cl.CreateBranch(ctx, ws.RepoID, SpecsBranch, "main"); err != nil {
			return false, fmt.Errorf("create %s on %s: %w", SpecsBranch, ws.RepoID, err)
		}
	}
	for _, name := range specNames {
		path := "workers/" + ws.WorkerID + "/.context/" + name
		err := cl.PutFile(ctx, ws.RepoID, FileRequest{Path: path, Branch: SpecsBranch, Message: "helix-org: " + path + " as the org has it",
			Author: "helix-org", Email: "helix-org@localhost", Content: base64.StdEncoding.EncodeToString([]byte(files[name]))})
		if err != nil {
			return false, fmt.Errorf("put %s on %s of %s: %w", path, SpecsBranch, ws.RepoID, err)
		}
	}
	ws.SpecsSum = sum
	return true, st.SetHelixSpecsSum(ctx, ws.WorkerID, sum)
}

// syncSpecs pushes the run's role and identity when they changed since
// the last push: the hire's run pushes them first.
func (r *Runtime) syncSpecs(ctx context.Context, run domain.Run, ws *domain.HelixWorkspace) error {
	files, err := runSpecs(run)
	if err != nil {
		return err
	}
	pushed, err := pushSpecs(ctx, r.client, r.host.Store, ws, files)
	if pushed {
		note(run, fmt.Sprintf("role and identity put on %s of repository %s", SpecsBranch, ws.RepoID))
	}
	return err
}

// attachMCP makes the worker's helix-org MCP endpoint a server of its
// agent app's assistant, authorised by the token secret. The app's config
// is edited as raw JSON, so what this runtime does not model survives,
// and written back only when it changes.
func (r *Runtime) attachMCP(ctx context.Context, run domain.Run, ws domain.HelixWorkspace) error {
	app, err := r.client.App(ctx, ws.AppID)
	if err != nil {
		return fmt.Errorf("read agent app %s: %w", ws.AppID, err)
	}
	cfg := map[string]any{}
	if len(app.Config) > 0 && string(app.Config) != "null" {
		if err := json.Unmarshal(app.Config, &cfg); err != nil {
			return fmt.Errorf("agent app %s: its config: %w", ws.AppID, err)
		}
	}
	hx, _ := cfg["helix"].(map[string]any)
	if hx == nil {
		hx = map[string]any{}
	}
	assistants, _ := hx["assistants"].([]any)
	if len(assistants) == 0 {
		assistants = []any{map[string]any{"name": run.WorkerID}}
	}
	first, _ := assistants[0].(map[string]any)
	if first == nil {
		return fmt.Errorf("agent app %s: its first assistant is not an object", ws.AppID)
	}
	url := run.MCPURL
	if r.cfg.OrgURL != "" {
		url = domain.MCPURL(r.cfg.OrgURL, run.WorkerID)
	}
	entry := map[string]any{"name": MCPName, "description": "The org, as worker " + run.WorkerID + " sees it", "transport": "http", "url": url,
		"headers": map[string]any{"Authorization": "Bearer ${" + TokenSecret + "}"}}
	mcps, _ := first["mcps"].([]any)
	kept := []any{entry}
	for _, m := range mcps {
		if mm, ok := m.(map[string]any); ok && mm["name"] == MCPName {
			if reflect.DeepEqual(mm, entry) {
				return nil
			}
			continue
		}
		kept = append(kept, m)
	}
	first["mcps"] = kept
	assistants[0] = first
	hx["assistants"] = assistants
	cfg["helix"] = hx
	if app.Config, err = json.Marshal(cfg); err != nil {
		return err
	}
	if app.OrganizationID == "" {
		app.OrganizationID = r.cfg.Organization
	}
	if err := r.client.UpdateApp(ctx, app); err != nil {
		return fmt.Errorf("attach the MCP endpoint to agent app %s: %w", ws.AppID, err)
	}
	note(run, fmt.Sprintf("agent app %s reaches the org at %s", ws.AppID, url))
	return nil
}

func note(run domain.Run, text string) {
	if run.Log != nil {
		run.Log(domain.LogEntry{Kind: domain.LogNote, Text: text})
	}
}
