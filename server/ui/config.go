package ui

import (
	"github.com/helixml/helix-org/domain"
)

// Settings are the operational config keys the web UI reads.
var Settings = append(domain.Settings{SessionTTLSetting, SecureCookiesSetting, LiveViewsPerSessionSetting, LiveViewsMaxSetting}, OIDCSettings...)

// SessionTTLSetting is how long a sign-in lasts. The expiry is fixed at
// sign-in, not sliding: a session ends that long after it began, however
// busy, and the person signs in again.
var SessionTTLSetting = domain.SettingSpec{
	Key: "ui.session_ttl", Type: domain.SettingDuration, Default: "12h",
	Description: "How long a web UI sign-in lasts, from sign-in (fixed, not sliding).",
}

// SecureCookiesSetting marks the session cookie Secure even when the
// request arrived over plain HTTP, for a server behind a TLS proxy.
var SecureCookiesSetting = domain.SettingSpec{
	Key: "ui.secure_cookies", Type: domain.SettingBool, Default: "false",
	Description: "Mark the web UI's session cookie Secure even over plain HTTP (set it behind a TLS-terminating proxy); it always is over TLS.",
}
