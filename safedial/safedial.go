// Package safedial builds HTTP clients for requests to addresses strangers
// choose (webhook outbound URLs, provider API URLs). It refuses, at dial
// time and on the resolved address, loopback, private, link-local, CGNAT,
// metadata and other special-purpose addresses, so neither a clever URL
// (0x7f000001, [::ffff:127.0.0.1]) nor DNS rebinding reaches the inside of
// the network. It never follows redirects and never uses a proxy.
package safedial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/helixml/helix-org/domain"
)

// ErrBlocked is wrapped by every refused dial.
var ErrBlocked = errors.New("destination address is not allowed")

// AllowPrivateSetting lets outbound requests reach the addresses this
// package otherwise refuses (for a receiver on the same host or LAN). It
// is read on every request, so changing it applies at once.
var AllowPrivateSetting = domain.SettingSpec{Key: "transport.webhook.allow_private", Type: domain.SettingBool, Default: "false",
	Description: "Let outbound webhooks (and any transport call made through the SSRF guard) reach loopback, private, link-local, CGNAT and metadata addresses. Off by default."}

// Options configure a client.
type Options struct {
	// AllowPrivate is asked on every request; true lifts the address check.
	// Nil means never.
	AllowPrivate func(ctx context.Context) bool
	// Timeout bounds a whole request, reading the answer included. Default 30s.
	Timeout time.Duration
	// Resolver resolves host names; nil is the system's. Tests use it to
	// make a name resolve to loopback.
	Resolver *net.Resolver
}

// NewClient returns a client that refuses blocked addresses unless
// AllowPrivate says otherwise, and returns redirects as responses.
func NewClient(opts Options) *http.Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.AllowPrivate == nil {
		opts.AllowPrivate = func(context.Context) bool { return false }
	}
	rt := &switcher{allow: opts.AllowPrivate, strict: transport(opts.Resolver, Control), open: transport(opts.Resolver, nil)}
	return &http.Client{
		Transport:     rt,
		Timeout:       opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// switcher sends each request through the strict or the open transport.
// Two transports, so a connection pooled while private addresses were
// allowed is never reused after they are not.
type switcher struct {
	allow        func(ctx context.Context) bool
	strict, open *http.Transport
}

func (s *switcher) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.allow(r.Context()) {
		return s.open.RoundTrip(r)
	}
	return s.strict.RoundTrip(r)
}

func transport(res *net.Resolver, control func(network, address string, c syscall.RawConn) error) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Resolver: res, Control: control}
	return &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, past the check
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// Control is a net.Dialer Control hook: it runs after name resolution and
// before connect, on the exact address about to be dialled, and refuses
// blocked ones, so no packet is sent to them.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: unparseable address: %w", network, address, ErrBlocked)
	}
	if err := Check(ap.Addr()); err != nil {
		return fmt.Errorf("dial %s %s: %w", network, address, err)
	}
	return nil
}

// blocked lists special-purpose ranges beyond what netip's predicates cover.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT (also Alibaba's metadata 100.100.100.200)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (Oracle's metadata 192.0.0.192)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds an obscured IPv4 address
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Check refuses an address that is not a public unicast one. IPv4 carried
// inside IPv6 (mapped, NAT64, 6to4) is checked as the IPv4 it carries.
func Check(ip netip.Addr) error {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return ErrBlocked
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return Check(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return Check(netip.AddrFrom4([4]byte(b[2:6])))
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() ||
		ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%s is a loopback, private, link-local or multicast address: %w", ip, ErrBlocked)
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return fmt.Errorf("%s is in special-purpose range %s: %w", ip, p, ErrBlocked)
		}
	}
	return nil
}
