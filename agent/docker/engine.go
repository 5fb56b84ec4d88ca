package docker

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"

	"github.com/helixml/helix-org/agent/docker/engineapi"
)

// Labels put on everything this package creates.
const (
	LabelInstance   = "org.helix-org.instance"
	LabelKind       = "org.helix-org.kind"
	LabelActivation = "org.helix-org.activation"
	LabelWorker     = "org.helix-org.worker"
	LabelSkill      = "org.helix-org.skill"
)

// Kinds of labelled objects.
const (
	KindActivation = "activation"
	KindSkill      = "skill"
)

// Engine is one server's handle on the Docker Engine: the API client, the
// instance label that scopes what it owns, and the networks it manages.
type Engine struct {
	cli      *engineapi.Client
	instance string
	log      *slog.Logger

	mu   sync.Mutex
	nets map[string]Network
}

// InstanceID names a server instance after its database file, so a server
// restarted on the same database owns what its predecessor created.
func InstanceID(dbPath string) string {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		abs = dbPath
	}
	sum := sha256.Sum256([]byte(abs))
	return "hx" + hex.EncodeToString(sum[:5])
}

// NewEngine builds a client from the environment (DOCKER_HOST and
// friends). It does no I/O: a server without Docker starts fine, and only
// the docker runtime and skills fail, with a clear error.
func NewEngine(instance string, log *slog.Logger) (*Engine, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cli, err := engineapi.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return &Engine{cli: cli, instance: instance, log: log.With("component", "docker"), nets: map[string]Network{}}, nil
}

// Client is the Engine API client.
func (e *Engine) Client() *engineapi.Client { return e.cli }

// Instance is the label value that scopes this server's objects.
func (e *Engine) Instance() string { return e.instance }

// Close releases the client.
func (e *Engine) Close() error { return e.cli.Close() }

// Ping checks the daemon answers.
func (e *Engine) Ping(ctx context.Context) error {
	if _, err := e.cli.Ping(ctx); err != nil {
		return fmt.Errorf("docker engine unreachable (is dockerd running and DOCKER_HOST right?): %w", err)
	}
	return nil
}

// Labels returns the labels for a new object of kind, plus extra pairs.
func (e *Engine) Labels(kind string, extra ...string) map[string]string {
	l := map[string]string{LabelInstance: e.instance, LabelKind: kind}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

// Name is a Docker object name scoped to this instance.
func (e *Engine) Name(parts ...string) string {
	n := "helix-org-" + e.instance
	for _, p := range parts {
		n += "-" + p
	}
	return n
}

// Filter selects this instance's objects by label, plus each key/value
// pair given.
func (e *Engine) Filter(pairs ...string) filters.Args {
	f := filters.NewArgs(filters.Arg("label", LabelInstance+"="+e.instance))
	for i := 0; i+1 < len(pairs); i += 2 {
		f.Add("label", pairs[i]+"="+pairs[i+1])
	}
	return f
}

// Reap removes activation containers a crashed predecessor left behind.
// Call it at start-up, before any activation runs.
func (e *Engine) Reap(ctx context.Context) (int, error) {
	list, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: e.Filter(LabelKind, KindActivation)})
	if err != nil {
		return 0, fmt.Errorf("list leftover activation containers: %w", err)
	}
	for _, c := range list {
		if err := e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !engineapi.IsNotFound(err) {
			return 0, fmt.Errorf("reap container %s: %w", c.ID[:12], err)
		}
	}
	if len(list) > 0 {
		e.log.Info("reaped leftover activation containers", "count", len(list))
	}
	return len(list), nil
}

// removeImages deletes this instance's images, children before parents:
// a parent still in use is retried once its children are gone.
func (e *Engine) removeImages(ctx context.Context) error {
	imgs, err := e.cli.ImageList(ctx, image.ListOptions{Filters: e.Filter()})
	if err != nil {
		return fmt.Errorf("list images: %w", err)
	}
	// Newest first: children are usually younger than their parents.
	slices.SortFunc(imgs, func(a, b image.Summary) int { return cmp.Compare(b.Created, a.Created) })
	for len(imgs) > 0 {
		var left []image.Summary
		var lastErr error
		for _, im := range imgs {
			_, err := e.cli.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
			if err != nil && !engineapi.IsNotFound(err) {
				left, lastErr = append(left, im), err
			}
		}
		if len(left) == len(imgs) {
			return fmt.Errorf("remove image %s: %w", left[0].ID, lastErr)
		}
		imgs = left
	}
	return nil
}

// RemoveAll deletes every container, image and network of this instance.
// It is for tests and for uninstalling; a running server keeps its skills.
func (e *Engine) RemoveAll(ctx context.Context) error {
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: e.Filter()})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs {
		if err := e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !engineapi.IsNotFound(err) {
			return fmt.Errorf("remove container %s: %w", c.ID[:12], err)
		}
	}
	if err := e.removeImages(ctx); err != nil {
		return err
	}
	nets, err := e.cli.NetworkList(ctx, network.ListOptions{Filters: e.Filter()})
	if err != nil {
		return fmt.Errorf("list networks: %w", err)
	}
	for _, n := range nets {
		if err := e.cli.NetworkRemove(ctx, n.ID); err != nil && !engineapi.IsNotFound(err) {
			return fmt.Errorf("remove network %s: %w", n.Name, err)
		}
	}
	e.mu.Lock()
	e.nets = map[string]Network{}
	e.mu.Unlock()
	return nil
}

// RemoveContainer deletes a container whatever state it is in; one that is
// already gone is not an error. It has its own deadline, so it also runs
// as cleanup after the caller's context has ended.
func (e *Engine) RemoveContainer(id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !engineapi.IsNotFound(err) {
		e.log.Warn("remove container", "container", id, "err", err)
	}
}
