package engineapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/docker/docker/api/types/network"
)

// NetworkCreate creates a network.
func (c *Client) NetworkCreate(ctx context.Context, name string, opts network.CreateOptions) (network.CreateResponse, error) {
	in := network.CreateRequest{CreateOptions: opts, Name: name}
	current, err := c.atLeast(ctx, "1.44")
	if err != nil {
		return network.CreateResponse{}, err
	}
	if !current {
		// Older engines create a second network of the same name unless asked not to.
		yes := true
		//lint:ignore SA1019 deprecated from 1.44, needed before it
		in.CheckDuplicate = &yes
	}
	var out network.CreateResponse
	return out, c.call(ctx, http.MethodPost, "/networks/create", nil, in, &out)
}

// NetworkConnect joins a container to a network.
func (c *Client) NetworkConnect(ctx context.Context, netID, containerID string, cfg *network.EndpointSettings) error {
	netID, err := pathID("network", netID)
	if err != nil {
		return err
	}
	if containerID, err = pathID("container", containerID); err != nil {
		return err
	}
	in := network.ConnectOptions{Container: containerID, EndpointConfig: cfg}
	return c.call(ctx, http.MethodPost, "/networks/"+netID+"/connect", nil, in, nil)
}

// NetworkInspect returns a network's details.
func (c *Client) NetworkInspect(ctx context.Context, netID string, opts network.InspectOptions) (network.Inspect, error) {
	var out network.Inspect
	netID, err := pathID("network", netID)
	if err != nil {
		return out, err
	}
	q := url.Values{}
	if opts.Verbose {
		q.Set("verbose", "true")
	}
	if opts.Scope != "" {
		q.Set("scope", opts.Scope)
	}
	return out, c.call(ctx, http.MethodGet, "/networks/"+netID, q, nil, &out)
}

// NetworkList lists networks.
func (c *Client) NetworkList(ctx context.Context, opts network.ListOptions) ([]network.Summary, error) {
	q := url.Values{}
	if err := setFilters(q, opts.Filters); err != nil {
		return nil, err
	}
	var out []network.Summary
	return out, c.call(ctx, http.MethodGet, "/networks", q, nil, &out)
}

// NetworkRemove deletes a network.
func (c *Client) NetworkRemove(ctx context.Context, netID string) error {
	netID, err := pathID("network", netID)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodDelete, "/networks/"+netID, nil, nil, nil)
}
