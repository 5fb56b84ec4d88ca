package docker

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Listen opens a TCP listener that only containers on this network can
// reach: on the gateway address, bound to the network's bridge so the
// kernel refuses connections arriving over any other interface (the host
// answers on all its addresses from every bridge otherwise), and filtered
// by source subnet as a second line.
func (n Network) Listen(ctx context.Context) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.BindToDevice(int(fd), n.Bridge) }); err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(n.Gateway, 0).String())
	if err != nil {
		return nil, fmt.Errorf("listen on %s (%s): %w", n.Gateway, n.Bridge, err)
	}
	return SubnetListener(ln, n.Subnet), nil
}

// SubnetListener accepts connections only from allow and closes every
// other one as soon as it arrives.
func SubnetListener(ln net.Listener, allow netip.Prefix) net.Listener {
	return &subnetListener{Listener: ln, allow: allow}
}

type subnetListener struct {
	net.Listener
	allow netip.Prefix
}

func (l *subnetListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err == nil && l.allow.Contains(ap.Addr().Unmap()) {
			return c, nil
		}
		c.Close()
	}
}
