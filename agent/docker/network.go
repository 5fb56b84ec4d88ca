package docker

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/docker/docker/api/types/network"

	"github.com/helixml/helix-org/agent/docker/engineapi"
)

// Network purposes. Activations and skills get separate internal networks,
// so a skill never shares a subnet with an agent.
const (
	NetAgents = "agents"
	NetSkills = "skills"
)

// Network is an internal bridge network this server manages.
type Network struct {
	ID   string
	Name string
	// Bridge is the host's interface for the network.
	Bridge string
	// Subnet and Gateway come from the network's IPAM config. The gateway is
	// the host's address on the bridge.
	Subnet  netip.Prefix
	Gateway netip.Addr
}

// Network returns this instance's internal network for purpose, creating
// it if needed. It is internal (no route off the host: packets to anywhere
// else, 169.254.169.254 included, are dropped by Docker's isolation rules)
// and has inter-container traffic disabled, so containers on it reach only
// the host's gateway address.
func (e *Engine) Network(ctx context.Context, purpose string) (Network, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := e.nets[purpose]; ok {
		return n, nil
	}
	name := e.Name(purpose)
	insp, err := e.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if engineapi.IsNotFound(err) {
		_, err = e.cli.NetworkCreate(ctx, name, network.CreateOptions{
			Driver: "bridge", Internal: true, Labels: e.Labels("network-" + purpose),
			Options: map[string]string{"com.docker.network.bridge.enable_icc": "false"},
		})
		if err != nil {
			return Network{}, fmt.Errorf("create network %s: %w", name, err)
		}
		insp, err = e.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	}
	if err != nil {
		return Network{}, fmt.Errorf("inspect network %s: %w", name, err)
	}
	n := Network{ID: insp.ID, Name: name, Bridge: insp.Options["com.docker.network.bridge.name"]}
	if n.Bridge == "" {
		n.Bridge = "br-" + insp.ID[:12]
	}
	for _, c := range insp.IPAM.Config {
		p, perr := netip.ParsePrefix(c.Subnet)
		g, gerr := netip.ParseAddr(c.Gateway)
		if perr == nil && gerr == nil && p.Addr().Is4() {
			n.Subnet, n.Gateway = p, g
		}
	}
	if !n.Gateway.IsValid() {
		return Network{}, fmt.Errorf("network %s has no IPv4 gateway", name)
	}
	e.nets[purpose] = n
	return n, nil
}
