package skill

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/engineapi"
	"github.com/helixml/helix-org/domain"
)

// LabelVersion marks a skill container with the version it runs.
const LabelVersion = "org.helix-org.skill-version"

// createContainer creates (not starts) a hardened container for one
// version of a skill on the internal skills network, with its secrets
// from config as environment variables.
func (f *Factory) createContainer(ctx context.Context, name string, version int, img string) (string, error) {
	lim, err := f.limits(ctx)
	if err != nil {
		return "", err
	}
	secrets, err := perSkill[map[string]string](ctx, f, EnvSetting, name)
	if err != nil {
		return "", err
	}
	extra, err := perSkill[[]string](ctx, f, NetworksSetting, name)
	if err != nil {
		return "", err
	}
	net, err := f.eng.Network(ctx, docker.NetSkills)
	if err != nil {
		return "", err
	}
	env := []string{"PORT=" + strconv.Itoa(Port)}
	for _, k := range slices.Sorted(maps.Keys(secrets)) {
		env = append(env, k+"="+secrets[k])
	}
	cfg := &container.Config{Image: img, Env: env, User: lim.User,
		Labels: f.eng.Labels(docker.KindSkill, docker.LabelSkill, name, LabelVersion, strconv.Itoa(version))}
	nets := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{net.Name: {}}}
	cname := f.eng.Name("skill", name, "v"+strconv.Itoa(version))
	// A container of the same name is a leftover of an interrupted attempt.
	f.eng.RemoveContainer(cname)
	c, err := f.eng.Client().ContainerCreate(ctx, cfg, lim.HostConfig(nil), nets, nil, cname)
	if err != nil {
		return "", fmt.Errorf("create skill container: %w", err)
	}
	for _, n := range extra {
		if err := f.eng.Client().NetworkConnect(ctx, n, c.ID, nil); err != nil {
			f.eng.RemoveContainer(c.ID)
			return "", fmt.Errorf("join network %s (%s): %w", n, NetworksSetting.Key, err)
		}
	}
	return c.ID, nil
}

// start starts a container and waits until GET /health answers 200,
// returning the address to call it at. If it exits or the deadline
// passes first, the error carries the container's output.
func (f *Factory) start(ctx context.Context, id string) (string, error) {
	if err := f.eng.Client().ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return "", fmt.Errorf("start skill container: %w", err)
	}
	return f.healthy(ctx, id)
}

// healthy waits for a running container's /health and returns its address.
func (f *Factory) healthy(ctx context.Context, id string) (string, error) {
	net, err := f.eng.Network(ctx, docker.NetSkills)
	if err != nil {
		return "", err
	}
	insp, err := f.eng.Client().ContainerInspect(ctx, id)
	if err != nil {
		return "", fmt.Errorf("inspect skill container: %w", err)
	}
	if insp.State != nil && !insp.State.Running {
		return "", f.exited(id, insp.State.ExitCode)
	}
	ep := insp.NetworkSettings.Networks[net.Name]
	if ep == nil || ep.IPAddress == "" {
		return "", fmt.Errorf("skill container has no address on %s", net.Name)
	}
	addr := ep.IPAddress + ":" + strconv.Itoa(Port)
	return addr, f.waitHealthy(ctx, id, addr)
}

// healthPoll is how often a starting skill is asked for /health.
const healthPoll = 50 * time.Millisecond

func (f *Factory) waitHealthy(ctx context.Context, id, addr string) error {
	deadline := f.st.DurationSetting(ctx, HealthTimeoutSetting)
	hctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	t := time.NewTicker(healthPoll)
	defer t.Stop()
	last := "no answer yet"
	for {
		req, _ := http.NewRequestWithContext(hctx, http.MethodGet, "http://"+addr+"/health", nil)
		resp, err := f.http.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				// The answer counts only if the container still runs: one
				// that died frees its address, which Docker may already have
				// given to another skill's container.
				insp, err := f.eng.Client().ContainerInspect(ctx, id)
				if err != nil {
					return fmt.Errorf("inspect skill container: %w", err)
				}
				if insp.State != nil && !insp.State.Running {
					return f.exited(id, insp.State.ExitCode)
				}
				return nil
			}
			last = fmt.Sprintf("GET /health answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		}
		if insp, err := f.eng.Client().ContainerInspect(ctx, id); err == nil && insp.State != nil && !insp.State.Running {
			return f.exited(id, insp.State.ExitCode)
		}
		select {
		case <-hctx.Done():
			return fmt.Errorf("the skill was not healthy within %s (%s; %s): %s\n--- container output ---\n%s",
				deadline, HealthTimeoutSetting.Key, last, "it must answer GET /health with 200 on port 8080", f.logs(id))
		case <-t.C:
		}
	}
}

func (f *Factory) exited(id string, code int) error {
	return fmt.Errorf("the skill's container exited with status %d before it was healthy\n--- container output ---\n%s", code, f.logs(id))
}

// logs returns the tail of a container's output.
func (f *Factory) logs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := f.eng.Client().ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "40"})
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer rc.Close()
	var out strings.Builder
	stdcopy.StdCopy(&out, &out, io.LimitReader(rc, 64<<10))
	return strings.TrimRight(out.String(), "\n")
}

// stop stops a container, giving its process a moment to exit cleanly.
func (f *Factory) stop(ctx context.Context, id string) error {
	secs := 2
	if err := f.eng.Client().ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil && !engineapi.IsNotFound(err) {
		return fmt.Errorf("stop skill container: %w", err)
	}
	return nil
}

// running starts a skill's container if it is not running — creating it
// again from the image if it is gone — and returns its address. The
// caller holds the skill's lock.
func (f *Factory) running(ctx context.Context, sk domain.Skill) (string, error) {
	if a := f.addr(sk.Name); a != "" && sk.Status == domain.SkillReady {
		return a, nil
	}
	id := sk.Container
	if id != "" {
		insp, err := f.eng.Client().ContainerInspect(ctx, id)
		switch {
		case engineapi.IsNotFound(err):
			id = ""
		case err != nil:
			return "", fmt.Errorf("inspect skill container: %w", err)
		case insp.State != nil && insp.State.Running:
			// Still up (after a restart of the server, say): keep it if healthy.
			if addr, err := f.healthy(ctx, id); err == nil {
				return addr, f.ready(ctx, sk.Name, id, addr)
			}
			if err := f.stop(ctx, id); err != nil {
				return "", err
			}
		}
	}
	if id == "" {
		var err error
		if id, err = f.createContainer(ctx, sk.Name, sk.Version, sk.Image); err != nil {
			return "", err
		}
	}
	addr, err := f.start(ctx, id)
	if err != nil {
		f.stop(context.WithoutCancel(ctx), id)
		return "", err
	}
	return addr, f.ready(ctx, sk.Name, id, addr)
}

// ready records a healthy container.
func (f *Factory) ready(ctx context.Context, name, id, addr string) error {
	if err := f.st.SetSkillState(ctx, name, domain.SkillReady, id, ""); err != nil {
		return err
	}
	f.setAddr(name, addr)
	return nil
}
