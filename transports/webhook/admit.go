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
// (127.0.0.1, [::1], 10.0.0.5, localhost): every delivery to it would
// fail, so creating it, or moving a stream to it, fails at once, saying
// what to set. A host name is not resolved here: what it resolves to can
// change before a delivery, so the sender checks the address it dials,
// every time.
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
	if ip, err := netip.ParseAddr(host); err == nil && safedial.Check(ip) != nil {
		return ip.String()
	}
	return ""
}
