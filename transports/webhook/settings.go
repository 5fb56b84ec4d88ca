package webhook

import (
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
)

// MaxBodySetting bounds an inbound webhook body; larger requests get 413.
var MaxBodySetting = inbound.MaxBodySetting("transport.webhook", 1<<20,
	"Largest inbound webhook body accepted, in bytes; larger requests get 413.")

// Settings lists the webhook transport's config keys, including the
// engine's attempt limit for webhook deliveries and the SSRF guard's switch.
var Settings = domain.Settings{MaxBodySetting, delivery.MaxAttemptsSetting(Kind), safedial.AllowPrivateSetting}
