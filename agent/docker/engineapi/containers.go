package engineapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/versions"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ContainerCreate creates a container; platform is not supported and
// must be nil (it is there to keep the docker client's signature).
func (c *Client) ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, nets *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error) {
	var out container.CreateResponse
	if platform != nil {
		return out, fmt.Errorf("create container %s: a platform is not supported", name)
	}
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	in := container.CreateRequest{Config: cfg, HostConfig: host, NetworkingConfig: nets}
	return out, c.call(ctx, http.MethodPost, "/containers/create", q, in, &out)
}

// ContainerStart starts a created container.
func (c *Client) ContainerStart(ctx context.Context, id string, _ container.StartOptions) error {
	id, err := pathID("container", id)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// ContainerStop sends the stop signal and, after opts.Timeout seconds,
// SIGKILL.
func (c *Client) ContainerStop(ctx context.Context, id string, opts container.StopOptions) error {
	id, err := pathID("container", id)
	if err != nil {
		return err
	}
	q := url.Values{}
	if opts.Timeout != nil {
		q.Set("t", strconv.Itoa(*opts.Timeout))
	}
	if opts.Signal != "" {
		q.Set("signal", opts.Signal)
	}
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/stop", q, nil, nil)
}

// ContainerKill sends signal (empty: SIGKILL) to a running container.
func (c *Client) ContainerKill(ctx context.Context, id, signal string) error {
	id, err := pathID("container", id)
	if err != nil {
		return err
	}
	q := url.Values{}
	if signal != "" {
		q.Set("signal", signal)
	}
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/kill", q, nil, nil)
}

// ContainerRemove deletes a container.
func (c *Client) ContainerRemove(ctx context.Context, id string, opts container.RemoveOptions) error {
	id, err := pathID("container", id)
	if err != nil {
		return err
	}
	q := url.Values{}
	setFlag(q, "v", opts.RemoveVolumes)
	setFlag(q, "link", opts.RemoveLinks)
	setFlag(q, "force", opts.Force)
	return c.call(ctx, http.MethodDelete, "/containers/"+id, q, nil, nil)
}

// ContainerInspect returns a container's full state.
func (c *Client) ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error) {
	var out container.InspectResponse
	id, err := pathID("container", id)
	if err != nil {
		return out, err
	}
	return out, c.call(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &out)
}

// ContainerList lists containers.
func (c *Client) ContainerList(ctx context.Context, opts container.ListOptions) ([]container.Summary, error) {
	q := url.Values{}
	setFlag(q, "all", opts.All)
	setFlag(q, "size", opts.Size)
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	if opts.Before != "" {
		q.Set("before", opts.Before)
	}
	if err := setFilters(q, opts.Filters); err != nil {
		return nil, err
	}
	var out []container.Summary
	return out, c.call(ctx, http.MethodGet, "/containers/json", q, nil, &out)
}

// ContainerWait waits for a container to reach condition. The request is
// made before it returns, so a container started afterwards cannot exit
// unseen; its outcome comes on one of the two channels.
func (c *Client) ContainerWait(ctx context.Context, id string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error) {
	resC, errC := make(chan container.WaitResponse), make(chan error, 1)
	id, err := pathID("container", id)
	if err != nil {
		errC <- err
		return resC, errC
	}
	q := url.Values{}
	if condition != "" {
		q.Set("condition", string(condition))
	}
	// The engine answers with headers at once, and with the body when the
	// container exits.
	resp, err := c.send(ctx, http.MethodPost, "/containers/"+id+"/wait", q, nil, "")
	if err != nil {
		errC <- err
		return resC, errC
	}
	go func() {
		defer drain(resp)
		var res container.WaitResponse
		if err := decode(resp.Body, &res, "wait for container"); err != nil {
			errC <- err
			return
		}
		resC <- res
	}()
	return resC, errC
}

// ContainerLogs returns a container's log, multiplexed as stdcopy reads
// it unless the container has a TTY. Since and Until are sent as given:
// the engine wants Unix timestamps.
func (c *Client) ContainerLogs(ctx context.Context, id string, opts container.LogsOptions) (io.ReadCloser, error) {
	id, err := pathID("container", id)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setFlag(q, "stdout", opts.ShowStdout)
	setFlag(q, "stderr", opts.ShowStderr)
	setFlag(q, "timestamps", opts.Timestamps)
	setFlag(q, "details", opts.Details)
	setFlag(q, "follow", opts.Follow)
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	if opts.Until != "" {
		q.Set("until", opts.Until)
	}
	q.Set("tail", opts.Tail)
	resp, err := c.send(ctx, http.MethodGet, "/containers/"+id+"/logs", q, nil, "")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func setFlag(q url.Values, key string, on bool) {
	if on {
		q.Set(key, "1")
	}
}

func setFilters(q url.Values, f filters.Args) error {
	if f.Len() == 0 {
		return nil
	}
	s, err := filters.ToJSON(f)
	if err != nil {
		return fmt.Errorf("encode filters: %w", err)
	}
	q.Set("filters", s)
	return nil
}

// atLeast is whether the version in use, negotiated if need be, is v or
// newer.
func (c *Client) atLeast(ctx context.Context, v string) (bool, error) {
	have, err := c.apiVersion(ctx)
	return err == nil && versions.GreaterThanOrEqualTo(have, v), err
}
