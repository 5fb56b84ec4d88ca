package ui

import (
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/tools"
)

// Sign-in with the company's identity provider: any OpenID Connect
// provider, found from its issuer by discovery. The issuer and client
// are tools' (invite says when no invitation can be accepted without
// them); the UI registers them with the rest.
var (
	OIDCNameSetting = domain.SettingSpec{Key: "auth.oidc.name", Type: domain.SettingString,
		Description: "The provider's name on the sign-in button (\"Sign in with <name>\"); empty uses the issuer's host."}
	OIDCAllowPrivateSetting = domain.SettingSpec{Key: "auth.oidc.allow_private", Type: domain.SettingBool, Default: "false",
		Description: "Let the server reach an issuer on a loopback or private address (a provider on the same host or LAN). Off by default."}
)

// OIDCSettings are the keys of sign-in with an identity provider.
var OIDCSettings = domain.Settings{tools.OIDCIssuerSetting, tools.OIDCClientIDSetting, tools.OIDCClientSecretSetting, OIDCNameSetting, OIDCAllowPrivateSetting}
