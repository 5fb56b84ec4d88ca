package domain

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// ReboundHost spots DNS rebinding exactly as the go-sdk does on the MCP
// endpoint: a request that reached a loopback listener (local, the
// listener's address; empty when unknown) under a Host that is not
// loopback — a page whose name was made to resolve to 127.0.0.1. Every
// route that a browser could be sent to this way asks it.
func ReboundHost(local, host string) bool {
	return local != "" && loopbackHost(local) && !loopbackHost(host)
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ValidateHTTPURL checks an http(s) URL with a host and no credentials,
// for URLs a caller gives the server to call.
func ValidateHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q must use http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q must not carry credentials", raw)
	}
	return nil
}
