package webhook

import (
	"encoding/json"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
)

// admit refuses, while transport.webhook.allow_private is off, a stream
// whose outbound_url is written as an address the sender would refuse
// (127.0.0.1, 127.1, [::1], 10.0.0.5, localhost): every delivery to it
// would fail, so creating it, or moving a stream to it, fails at once,
// saying what to set. A host name is not resolved here: what it resolves
// to can change before a delivery, so the sender checks the address it
// dials, every time.
func admit(raw json.RawMessage, _ int, setting func(domain.SettingSpec) string) error {
	c, err := ParseConfig(raw)
	if err != nil || c.OutboundURL == "" {
		return err
	}
	if allow, _ := strconv.ParseBool(setting(safedial.AllowPrivateSetting)); allow {
		return nil
	}
	at := privateHost(c.OutboundURL)
	if at == "" {
		return nil
	}
	return domain.Invalid(domain.ConfigField("outbound_url"),
		"%s is on %s, a loopback, private or special-purpose address, which outbound webhooks may not reach while %s is false: every delivery would be refused. "+
			"If you mean it, run `helix-org config set %s true`, then create or update the stream", c.OutboundURL, at, safedial.AllowPrivateSetting.Key, safedial.AllowPrivateSetting.Key)
}

// privateHost is the URL's host when it is an address safedial refuses,
// or a localhost name (always loopback, RFC 6761); "" otherwise.
func privateHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return host
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if ip, ok = inetAton(host); !ok {
			return ""
		}
	}
	if safedial.Check(ip) != nil {
		return ip.String()
	}
	return ""
}

// inetAton reads host as inet_aton(3) does, and so getaddrinfo and curl:
// one to four parts, each decimal, octal after a leading 0 or hex after
// 0x, the last filling the bytes left. 127.1, 0x7f000001, 2130706433 and
// 0177.0.0.1 all reach 127.0.0.1, which netip.ParseAddr does not see.
func inetAton(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, p := range parts {
		last, limit := i == len(parts)-1, uint64(0xff)
		if last {
			limit = 1<<(8*(4-i)) - 1
		}
		v, ok := atonPart(p)
		if !ok || v > limit {
			return netip.Addr{}, false
		}
		if !last {
			b[i] = byte(v)
			continue
		}
		for j := 3; j >= i; j-- {
			b[j], v = byte(v), v>>8
		}
	}
	return netip.AddrFrom4(b), true
}

// atonPart is one part of an inet_aton address, at most 32 bits.
func atonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) > 1 && (p[1] == 'x' || p[1] == 'X') && p[0] == '0':
		p, base = p[2:], 16
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}
