package dispatch

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/workspace"
)

// prepareWorkspace makes the worker's workspace ready in its environment
// directory, where the sandbox and the container share it: ws.Dir is its
// path and ws.Attachment() what it is a checkout of. An error means the
// agent does not start: a workspace that cannot be made, or that an
// agent left unsafe for the server's git.
func (d *Dispatcher) prepareWorkspace(ctx context.Context, w domain.Worker, envDir string, log func(domain.LogEntry)) (domain.Workspace, error) {
	if _, err := exec.LookPath("git"); err != nil {
		// Runs went on without workspaces before there were any; a host
		// without git keeps them going, and says so on every run.
		log(domain.LogEntry{Kind: domain.LogNote, Text: "warning: no workspace this run: git is not installed on the server (apt-get install git)"})
		return domain.Workspace{}, nil
	}
	dir := domain.WorkspaceDir(envDir)
	ws, err := d.st.Workspace(ctx, w.ID)
	if err != nil {
		return ws, err
	}
	moved, err := workspace.Prepare(ctx, dir, ws, workspace.Author{ID: w.ID, Name: w.Name})
	if moved != "" {
		log(domain.LogEntry{Kind: domain.LogNote, Text: fmt.Sprintf("the workspace was moved aside to %s: the repository attached to %s changed", moved, w.ID)})
	}
	if err != nil {
		return ws, fmt.Errorf("workspace of %s: %w", w.ID, err)
	}
	if !ws.Current() || ws.Dir != dir {
		ws.Dir, ws.Prepared = dir, ws.Attachment()
		if err := d.st.RecordWorkspace(ctx, w.ID, dir, ws.Prepared, ws.Head); err != nil {
			return ws, err
		}
	}
	return ws, nil
}

// workspaceLabel raises the run's label by its workspace's: the agent may
// read any file an earlier run left there, so what an untrusted or
// private run wrote stays so for the runs after it.
func (d *Dispatcher) workspaceLabel(ctx context.Context, ws domain.Workspace, activation string, log func(domain.LogEntry)) error {
	if ws.Label.IsZero() {
		return nil
	}
	if _, err := d.st.RaiseLabel(ctx, activation, ws.Label); err != nil {
		return err
	}
	log(domain.LogEntry{Kind: domain.LogNote, Text: "this run reads a workspace earlier runs changed; it starts " + ws.Label.String()})
	return nil
}

// commitWorkspace commits what the run changed in the workspace, as the
// worker. A failure is noted on the run's log and the server's; the run's
// own outcome stands, and the changes wait for the next run's commit.
func (d *Dispatcher) commitWorkspace(ctx context.Context, w domain.Worker, ws domain.Workspace, activation string, log func(domain.LogEntry)) {
	if ws.Dir == "" {
		return
	}
	head, committed, err := workspace.Commit(ctx, ws.Dir, workspace.Author{ID: w.ID, Name: w.Name}, activation)
	if err == nil {
		err = d.st.RecordWorkspace(ctx, w.ID, ws.Dir, ws.Prepared, head)
	}
	if err == nil && committed {
		err = d.labelWorkspace(ctx, w.ID, activation)
	}
	if err != nil {
		log(domain.LogEntry{Kind: domain.LogNote, Text: "the workspace's changes were not committed: " + err.Error()})
		d.log.Error("commit workspace", "worker", w.ID, "activation", activation, "err", err)
		return
	}
	if committed {
		log(domain.LogEntry{Kind: domain.LogNote, Text: fmt.Sprintf("workspace: committed the run's changes as %s on %s", head, domain.WorkspaceBranch(w.ID))})
	}
}

// labelWorkspace joins the run's final label into its workspace's, once
// the run changed it.
func (d *Dispatcher) labelWorkspace(ctx context.Context, worker, activation string) error {
	l, err := d.st.ActivationLabel(ctx, activation)
	if err != nil {
		return err
	}
	return d.st.LabelWorkspace(ctx, worker, l)
}
