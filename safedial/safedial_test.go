package safedial_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/safedial"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr    string
		blocked bool
	}{
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		{"2606:4700:4700::1111", false},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true},
		{"::127.0.0.1", true}, // IPv4-compatible
		{"10.0.0.1", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"100.100.100.200", true}, // Alibaba metadata (CGNAT)
		{"169.254.169.254", true}, // AWS/GCP/Azure metadata
		{"192.0.0.192", true},     // Oracle metadata
		{"fd00:ec2::254", true},   // AWS IPv6 metadata
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fc00::1", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"255.255.255.255", true},
		{"240.0.0.1", true},
		{"64:ff9b::7f00:1", true},     // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", false},   // NAT64 of 8.8.8.8
		{"2002:7f00:1::", true},       // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe::", true},    // 6to4 of 169.254.169.254
		{"2001:0:4136:e378::1", true}, // Teredo
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := safedial.Check(netip.MustParseAddr(tt.addr))
			if got := errors.Is(err, safedial.ErrBlocked); got != tt.blocked {
				t.Errorf("Check(%s) = %v, want blocked=%v", tt.addr, err, tt.blocked)
			}
		})
	}
}

// countingServer is a loopback server that counts the connections it accepts.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// fakeDNS answers every A query with 127.0.0.1 and every other query with
// no records, as a rebinding attacker's name server would (and as libc's
// inet_aton reads "0x7f000001" or "2130706433"). It listens on loopback.
func fakeDNS(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n]); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// dnsAnswer builds the reply to a one-question query.
func dnsAnswer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	resp := append([]byte(nil), q[:end]...)
	resp[2], resp[3] = 0x81, 0x80 // response, recursion desired+available, NOERROR
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	if qtype != 1 { // only A records
		return resp
	}
	binary.BigEndian.PutUint16(resp[6:], 1)
	return append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
}

// TestClientLoopbackForms sends to a loopback listener by every spelling
// the issue names: all refused by default with the listener seeing no
// connection, all let through when private addresses are allowed.
func TestClientLoopbackForms(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	res := fakeDNS(t)
	hosts := []string{
		"127.0.0.1",
		"[::ffff:127.0.0.1]",
		"0x7f000001",           // hex: resolved (by our resolver, as by inet_aton) to 127.0.0.1
		"rebind.attacker.test", // a name whose DNS answer is loopback
		"localhost",
	}
	// Go never resolves an all-digit name (it is not a valid host name), so
	// the decimal form cannot reach anything, allowed or not.
	t.Run("2130706433", func(t *testing.T) {
		client := safedial.NewClient(safedial.Options{Resolver: res, AllowPrivate: func(context.Context) bool { return true }})
		before := conns.Load()
		if _, err := client.Get(fmt.Sprintf("http://2130706433:%d/", port)); err == nil || conns.Load() != before {
			t.Errorf("decimal host: err = %v, %d connections; want an error and none", err, conns.Load()-before)
		}
	})
	for _, allow := range []bool{false, true} {
		client := safedial.NewClient(safedial.Options{Resolver: res, AllowPrivate: func(context.Context) bool { return allow }})
		for _, host := range hosts {
			t.Run(fmt.Sprintf("%s/allow=%v", host, allow), func(t *testing.T) {
				before := conns.Load()
				resp, err := client.Get(fmt.Sprintf("http://%s:%d/", host, port))
				if resp != nil {
					resp.Body.Close()
				}
				after := conns.Load()
				if !allow {
					if !errors.Is(err, safedial.ErrBlocked) {
						t.Errorf("err = %v, want ErrBlocked", err)
					}
					if after != before {
						t.Errorf("listener accepted %d connections; want none", after-before)
					}
					return
				}
				if err != nil || resp.StatusCode != 204 {
					t.Fatalf("allowed request: resp %v, err %v", resp, err)
				}
				if after == before && host != "localhost" {
					t.Error("listener saw no connection though the request succeeded")
				}
			})
		}
	}
}

// TestClientRefusesBeforeConnect: addresses outside this machine are refused
// by the dial hook, which runs before connect(2), so no packet is sent.
func TestClientRefusesBeforeConnect(t *testing.T) {
	client := safedial.NewClient(safedial.Options{})
	// IPv4 only: a host without IPv6 may fail an IPv6 dial before the hook
	// runs; TestCheck covers the IPv6 ranges.
	for _, host := range []string{"10.0.0.1", "100.64.0.1", "169.254.169.254", "192.168.0.1"} {
		t.Run(host, func(t *testing.T) {
			start := time.Now()
			_, err := client.Get("http://" + host + "/latest/meta-data/")
			if !errors.Is(err, safedial.ErrBlocked) {
				t.Fatalf("err = %v, want ErrBlocked from the dial check", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusal took %s: it should not wait on the network", d)
			}
		})
	}
}

// TestControlRunsBeforeConnect pins the mechanism: the hook sees the
// resolved address and its error aborts the dial.
func TestControlRunsBeforeConnect(t *testing.T) {
	var seen string
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		seen = address
		return safedial.Control(network, address, c)
	}}
	_, err := d.DialContext(t.Context(), "tcp", "169.254.169.254:80")
	if !errors.Is(err, safedial.ErrBlocked) || seen != "169.254.169.254:80" {
		t.Errorf("dial err = %v (hook saw %q); want ErrBlocked for 169.254.169.254:80", err, seen)
	}
}

// TestRedirectNotFollowed: a 302 to the metadata address comes back as
// the 302. Private addresses are allowed only for the first request (the
// redirector is on loopback), so even a followed redirect would be
// refused at dial time rather than leave this machine.
func TestRedirectNotFollowed(t *testing.T) {
	srv, _ := countingServer(t, http.RedirectHandler("http://169.254.169.254/latest/meta-data/", http.StatusFound))
	var requests atomic.Int64
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(context.Context) bool { return requests.Add(1) == 1 }})
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.Contains(resp.Header.Get("Location"), "169.254.169.254") {
		t.Errorf("got %d %q, want the 302 itself", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests made, want 1 (the redirect was followed)", n)
	}
}

// TestAllowPrivateIsLive: the switch is read per request, and a connection
// pooled while it was on is not reused once it is off.
func TestAllowPrivateIsLive(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	var allow atomic.Bool
	allow.Store(true)
	client := safedial.NewClient(safedial.Options{AllowPrivate: func(context.Context) bool { return allow.Load() }})
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	allow.Store(false)
	before := conns.Load()
	if _, err := client.Get(srv.URL); !errors.Is(err, safedial.ErrBlocked) {
		t.Errorf("after turning it off: err = %v, want ErrBlocked", err)
	}
	if conns.Load() != before {
		t.Error("a new connection reached the listener after the switch was turned off")
	}
}
