package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// Runtime runs each activation as a Job. The run's context ending (a
// cancel, the timeout, shutdown) deletes the Job; the Job ending ends the run.
type Runtime struct {
	Client    *Client
	Namespace string
	// Org names the org on every object's labels (one value per database).
	Org string
	// Pod is the image and resources, Overrides their per role or worker
	// replacements, RoleOf the role a worker holds, for them.
	Pod       Pod
	Overrides Overrides
	RoleOf    func(ctx context.Context, worker string) (string, error)
	Command   []string
	// ServerURL is the server as pods reach it.
	ServerURL string
	// LLM, when set, is the built-in agent's model and limits, pointed at
	// the relay with the run's token.
	LLM    *agent.LLMConfig
	Logger *slog.Logger
}

var _ domain.Runtime = (*Runtime)(nil)

// Run creates the run's Secret and Job — or adopts the Job, when one for
// the run exists already — and follows it until it ends.
func (r *Runtime) Run(ctx context.Context, run domain.Run) (domain.RunResult, error) {
	res := domain.RunResult{ExitStatus: -1}
	name := JobName(run.ActivationID)
	adopted, err := r.start(ctx, run)
	if err != nil {
		return res, err
	}
	if adopted {
		run.Log(domain.LogEntry{Kind: domain.LogNote, Text: fmt.Sprintf("adopted Job %s/%s, started for this run before the server restarted", r.Namespace, name)})
	}
	// The Job is the agent: from here on it runs whether or not this
	// server does, and is found again by its name.
	run.Started(domain.AgentProcess{Runtime: agent.RuntimeKubernetes})
	logs := r.followLogs(ctx, run, &res)
	job, err := r.wait(ctx, name)
	if ctx.Err() != nil {
		r.delete(name)
		logs.stop()
		return res, ctx.Err()
	}
	logs.wait()
	if err != nil {
		res.Killed = errors.Is(err, errJobGone)
		return res, err
	}
	res.ExitStatus, err = r.outcome(context.WithoutCancel(ctx), job, run)
	r.delete(name)
	return res, err
}

// start creates the run's Secret, then its Job. A Job of that name is
// the run's own, started before a restart or by another server: adopted,
// not started again.
func (r *Runtime) start(ctx context.Context, run domain.Run) (bool, error) {
	spec, err := r.spec(ctx, run)
	if err != nil {
		return false, err
	}
	secret, job, err := spec.build()
	if err != nil {
		return false, err
	}
	name := job.Metadata.Name
	existing, err := r.Client.getJob(ctx, r.Namespace, name)
	switch {
	case err == nil:
		return true, r.owns(existing, run)
	case !isNotFound(err):
		return false, fmt.Errorf("look for Job %s/%s: %w", r.Namespace, name, err)
	}
	if err := r.Client.createSecret(ctx, r.Namespace, secret); err != nil && !isAlreadyExists(err) {
		return false, fmt.Errorf("create Secret %s/%s: %w", r.Namespace, name, err)
	}
	created, err := r.Client.createJob(ctx, r.Namespace, job)
	if isAlreadyExists(err) {
		// Another server created it between our look and our create.
		existing, gerr := r.Client.getJob(ctx, r.Namespace, name)
		if gerr != nil {
			return false, fmt.Errorf("adopt Job %s/%s: %w", r.Namespace, name, gerr)
		}
		return true, r.owns(existing, run)
	}
	if err != nil {
		r.deleteSecret(name)
		return false, fmt.Errorf("create Job %s/%s from %s: %w", r.Namespace, name, spec.Pod.Image, err)
	}
	r.ownSecret(ctx, created)
	return false, nil
}

// owns checks that a Job found by name is this run's.
func (r *Runtime) owns(j *job, run domain.Run) error {
	if l := j.Metadata.Labels; l[LabelActivation] != labelValue(run.ActivationID) || l[LabelOrg] != labelValue(r.Org) {
		return fmt.Errorf("a Job %s/%s exists and belongs to another run (labels %v)", r.Namespace, j.Metadata.Name, l)
	}
	return nil
}

// ownSecret makes the Job the Secret's owner, so the cluster deletes the
// Secret with the Job even if this server never does.
func (r *Runtime) ownSecret(ctx context.Context, j *job) {
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":%q,"uid":%q}]}}`, j.Metadata.Name, j.Metadata.UID)
	if err := r.Client.mergePatchSecret(ctx, r.Namespace, j.Metadata.Name, []byte(patch)); err != nil {
		r.log().Warn("make the Job own its Secret", "job", j.Metadata.Name, "err", err)
	}
}

// spec resolves the pod of one run: the defaults, the overrides of its
// role and worker, and the run as the pod sees the server.
func (r *Runtime) spec(ctx context.Context, run domain.Run) (runSpec, error) {
	if r.ServerURL == "" {
		return runSpec{}, fmt.Errorf("%s is not set: set the URL at which pods reach this server with `helix-org config set %s <url>`", ServerURLSetting.Key, ServerURLSetting.Key)
	}
	role := ""
	if r.RoleOf != nil && len(r.Overrides.Roles) > 0 {
		var err error
		if role, err = r.RoleOf(ctx, run.WorkerID); err != nil {
			return runSpec{}, fmt.Errorf("role of %s: %w", run.WorkerID, err)
		}
	}
	pod := r.Overrides.For(r.Pod, run.WorkerID, role)
	if pod.Image == "" {
		return runSpec{}, fmt.Errorf("%s is empty", ImageSetting.Key)
	}
	if len(r.Command) == 0 {
		return runSpec{}, fmt.Errorf("%s is empty", CommandSetting.Key)
	}
	inside := run
	inside.EnvDir, inside.BaseURL, inside.MCPURL = MountPath, r.ServerURL, domain.MCPURL(r.ServerURL, run.WorkerID)
	return runSpec{Namespace: r.Namespace, Org: r.Org, Pod: pod, Command: r.Command, Run: inside, LLM: r.LLM, EnvDir: run.EnvDir}, nil
}

// errJobGone is a Job deleted by someone other than this run.
var errJobGone = errors.New("the Job was deleted from outside helix-org")

// wait follows the Job until it completes or fails, or ctx ends.
func (r *Runtime) wait(ctx context.Context, name string) (*job, error) {
	for {
		j, err := r.Client.getJob(ctx, r.Namespace, name)
		if isNotFound(err) {
			return nil, errJobGone
		}
		if err != nil {
			return nil, fmt.Errorf("read Job %s/%s: %w", r.Namespace, name, err)
		}
		if finished(j) {
			return j, nil
		}
		w, err := r.Client.watchJob(ctx, r.Namespace, name, j.Metadata.ResourceVersion)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("watch Job %s/%s: %w", r.Namespace, name, err)
		}
		j, err = r.follow(ctx, w)
		w.stop()
		if j != nil || err != nil {
			return j, err
		}
		// The watch closed (a timeout, a restarted apiserver): look again.
	}
}

// follow reads a watch of one Job until it finishes, is deleted, or the
// watch ends (nil, nil): the apiserver's timeout, a restart, or an ERROR
// event such as a resource version too old to watch from.
func (r *Runtime) follow(ctx context.Context, w *watchStream) (*job, error) {
	for {
		ev, err := w.next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, nil
		}
		switch ev.Type {
		case eventDeleted:
			return nil, errJobGone
		case eventError:
			return nil, nil
		}
		j := &job{}
		if json.Unmarshal(ev.Object, j) == nil && finished(j) {
			return j, nil
		}
	}
}

// finished reports whether the Job has completed or failed.
func finished(j *job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == jobComplete || c.Type == jobFailed) && c.Status == conditionTrue {
			return true
		}
	}
	return false
}

// outcome is the exit status of a finished Job: 0 when it completed, its
// container's exit code when it failed; an error when it failed without
// one (its deadline, a pod that never ran).
func (r *Runtime) outcome(ctx context.Context, j *job, run domain.Run) (int, error) {
	for _, c := range j.Status.Conditions {
		if c.Status != conditionTrue {
			continue
		}
		switch c.Type {
		case jobComplete:
			return 0, nil
		case jobFailed:
			if c.Reason == reasonDeadlineExceeded {
				deadline := int64(0)
				if d := j.Spec.ActiveDeadlineSeconds; d != nil {
					deadline = *d
				}
				return -1, fmt.Errorf("the Job ran past its deadline (%ds) and was stopped by the cluster", deadline)
			}
			code, found := r.exitCode(ctx, j.Metadata.Name, run)
			if !found {
				return -1, fmt.Errorf("the Job failed: %s: %s", c.Reason, c.Message)
			}
			return code, nil
		}
	}
	return -1, errors.New("the Job ended in no known condition")
}

// exitCode is the agent container's exit code in the Job's pod.
func (r *Runtime) exitCode(ctx context.Context, job string, run domain.Run) (int, bool) {
	pods, err := r.Client.listPods(ctx, r.Namespace, "job-name="+job)
	if err != nil {
		return 0, false
	}
	for _, p := range pods.Items {
		for _, s := range p.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil {
				if t.Reason == "OOMKilled" {
					run.Log(domain.LogEntry{Kind: domain.LogError, Text: "the agent's container hit its memory limit and was OOM-killed"})
				}
				return int(t.ExitCode), true
			}
		}
	}
	return 0, false
}

// delete removes the Job, its pods in the background, and its Secret.
func (r *Runtime) delete(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Client.deleteJob(ctx, r.Namespace, name); err != nil && !isNotFound(err) {
		r.log().Warn("delete Job", "job", name, "err", err)
	}
	r.deleteSecret(name)
}

func (r *Runtime) deleteSecret(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Client.deleteSecret(ctx, r.Namespace, name); err != nil && !isNotFound(err) {
		r.log().Warn("delete Secret", "secret", name, "err", err)
	}
}

func (r *Runtime) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger.With("component", "kubernetes")
}
