package engineapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultHost is where the engine listens when DOCKER_HOST is unset.
const DefaultHost = "unix:///var/run/docker.sock"

// Host is how to reach one engine.
type Host struct {
	// Network is "unix" or "tcp"; Addr the socket's path or host:port.
	Network, Addr string
	// TLS, for tcp only, is nil for plain HTTP.
	TLS *tls.Config
	// APIVersion pins the API version; empty negotiates it.
	APIVersion string
}

func (h Host) String() string {
	if h.Network == "unix" {
		return "unix://" + h.Addr
	}
	return h.Network + "://" + h.Addr
}

// HostFromEnv reads DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH and
// DOCKER_API_VERSION.
func HostFromEnv() (Host, error) {
	verify := os.Getenv("DOCKER_TLS_VERIFY") != ""
	certs := os.Getenv("DOCKER_CERT_PATH")
	h, err := ParseHost(os.Getenv("DOCKER_HOST"), verify || certs != "")
	if err != nil {
		return Host{}, err
	}
	h.APIVersion = strings.TrimPrefix(os.Getenv("DOCKER_API_VERSION"), "v")
	if h.Network == "tcp" && (verify || certs != "") {
		if certs == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return Host{}, fmt.Errorf("DOCKER_TLS_VERIFY is set without DOCKER_CERT_PATH, and there is no home directory: %w", err)
			}
			certs = filepath.Join(home, ".docker")
		}
		if h.TLS, err = tlsConfig(certs, verify, hostname(h.Addr)); err != nil {
			return Host{}, fmt.Errorf("DOCKER_CERT_PATH %s: %w", certs, err)
		}
	}
	return h, nil
}

// ParseHost reads a DOCKER_HOST value: unix://path (empty is the default
// socket) or tcp://host[:port]. An ssh:// or npipe:// engine, which the
// docker CLI reaches through other programs, is refused.
func ParseHost(s string, withTLS bool) (Host, error) {
	if s == "" {
		s = DefaultHost
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Host{}, fmt.Errorf("DOCKER_HOST %q: want unix:///path/to/socket or tcp://host:port", s)
	}
	switch strings.ToLower(scheme) {
	case "unix":
		if rest == "" {
			return Host{}, fmt.Errorf("DOCKER_HOST %q names no socket", s)
		}
		return Host{Network: "unix", Addr: rest}, nil
	case "tcp":
		u, err := url.Parse("tcp://" + rest)
		if err != nil || u.Host == "" || u.Hostname() == "" {
			return Host{}, fmt.Errorf("DOCKER_HOST %q: want tcp://host:port", s)
		}
		if u.Path != "" && u.Path != "/" {
			return Host{}, fmt.Errorf("DOCKER_HOST %q: a path after the address is not supported", s)
		}
		addr := u.Host
		if u.Port() == "" {
			// The engine's registered ports: 2376 with TLS, 2375 without.
			port := "2375"
			if withTLS {
				port = "2376"
			}
			addr = net.JoinHostPort(u.Hostname(), port)
		}
		return Host{Network: "tcp", Addr: addr}, nil
	case "ssh", "npipe", "fd":
		return Host{}, fmt.Errorf("DOCKER_HOST %q: %s:// engines are not supported; use unix:// or tcp://", s, scheme)
	default:
		return Host{}, fmt.Errorf("DOCKER_HOST %q: unknown scheme %q; use unix:// or tcp://", s, scheme)
	}
}

func hostname(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// tlsConfig loads ca.pem, cert.pem and key.pem from dir. The CA is needed
// only to verify the engine; the client certificate only if the engine
// asks for one, so it is loaded when present.
func tlsConfig(dir string, verify bool, serverName string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName, InsecureSkipVerify: !verify} //nolint:gosec // DOCKER_TLS_VERIFY unset asks for it
	if verify {
		ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
		if err != nil {
			return nil, fmt.Errorf("DOCKER_TLS_VERIFY needs the engine's CA: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(ca) {
			return nil, errors.New("ca.pem holds no PEM certificate")
		}
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
		return tc, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	tc.Certificates = []tls.Certificate{cert}
	return tc, nil
}
