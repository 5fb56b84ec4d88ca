package engineapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
)

// ImageBuild sends a tar build context to POST /build. The answer's body
// is the build's stream of JSON messages for the caller to read and
// close; cancelling ctx makes the engine abandon the build. Of opts only
// the fields below are sent: registry auth, cache-from, ulimits, outputs,
// sessions and the CPU knobs are not.
func (c *Client) ImageBuild(ctx context.Context, buildContext io.Reader, opts build.ImageBuildOptions) (build.ImageBuildResponse, error) {
	q, err := buildQuery(opts)
	if err != nil {
		return build.ImageBuildResponse{}, err
	}
	resp, err := c.send(ctx, http.MethodPost, "/build", q, buildContext, "application/x-tar")
	if err != nil {
		return build.ImageBuildResponse{}, err
	}
	return build.ImageBuildResponse{Body: resp.Body, OSType: resp.Header.Get("Ostype")}, nil
}

func buildQuery(opts build.ImageBuildOptions) (url.Values, error) {
	q := url.Values{}
	if len(opts.Tags) > 0 {
		q["t"] = opts.Tags
	}
	if opts.Dockerfile != "" {
		q.Set("dockerfile", opts.Dockerfile)
	}
	if opts.Target != "" {
		q.Set("target", opts.Target)
	}
	// The engine removes intermediate containers unless told not to.
	if !opts.Remove {
		q.Set("rm", "0")
	}
	setFlag(q, "forcerm", opts.ForceRemove)
	setFlag(q, "pull", opts.PullParent)
	setFlag(q, "nocache", opts.NoCache)
	setFlag(q, "q", opts.SuppressOutput)
	if opts.NetworkMode != "" && opts.NetworkMode != network.NetworkDefault {
		q.Set("networkmode", opts.NetworkMode)
	}
	if opts.Memory != 0 {
		q.Set("memory", strconv.FormatInt(opts.Memory, 10))
	}
	if opts.MemorySwap != 0 {
		q.Set("memswap", strconv.FormatInt(opts.MemorySwap, 10))
	}
	if opts.Platform != "" {
		q.Set("platform", strings.ToLower(opts.Platform))
	}
	if opts.Version != "" {
		q.Set("version", string(opts.Version))
	}
	if err := setJSON(q, "buildargs", opts.BuildArgs); err != nil {
		return nil, err
	}
	if err := setJSON(q, "labels", opts.Labels); err != nil {
		return nil, err
	}
	return q, nil
}

// setJSON sets key to v as JSON, unless v is an empty map.
func setJSON[V any](q url.Values, key string, v map[string]V) error {
	if len(v) == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode build %s: %w", key, err)
	}
	q.Set(key, string(b))
	return nil
}

// ImageInspect returns an image's details.
func (c *Client) ImageInspect(ctx context.Context, ref string) (image.InspectResponse, error) {
	var out image.InspectResponse
	ref, err := pathID("image", ref)
	if err != nil {
		return out, err
	}
	return out, c.call(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, &out)
}

// ImageHistory returns an image's layers, newest first.
func (c *Client) ImageHistory(ctx context.Context, ref string) ([]image.HistoryResponseItem, error) {
	ref, err := pathID("image", ref)
	if err != nil {
		return nil, err
	}
	var out []image.HistoryResponseItem
	return out, c.call(ctx, http.MethodGet, "/images/"+ref+"/history", nil, nil, &out)
}

// ImageList lists images.
func (c *Client) ImageList(ctx context.Context, opts image.ListOptions) ([]image.Summary, error) {
	q := url.Values{}
	setFlag(q, "all", opts.All)
	if err := setFilters(q, opts.Filters); err != nil {
		return nil, err
	}
	var out []image.Summary
	return out, c.call(ctx, http.MethodGet, "/images/json", q, nil, &out)
}

// ImageRemove deletes an image (a tag, or the image with all its tags
// when forced).
func (c *Client) ImageRemove(ctx context.Context, ref string, opts image.RemoveOptions) ([]image.DeleteResponse, error) {
	ref, err := pathID("image", ref)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setFlag(q, "force", opts.Force)
	setFlag(q, "noprune", !opts.PruneChildren)
	var out []image.DeleteResponse
	return out, c.call(ctx, http.MethodDelete, "/images/"+ref, q, nil, &out)
}
