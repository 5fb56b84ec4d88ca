package ui

import (
	"net/url"

	"github.com/helixml/helix-org/domain"
)

// Sign-in with the company's identity provider: any OpenID Connect
// provider, found from its issuer by discovery.
var (
	OIDCIssuerSetting = domain.SettingSpec{Key: "auth.oidc.issuer", Type: domain.SettingString, Validate: validateIssuer,
		Description: "The OpenID Connect issuer people sign in to the web UI with (https://accounts.example.com); empty turns that sign-in off. Its redirect URI is <auth.public_url>/ui/signin/oidc/callback."}
	OIDCClientIDSetting = domain.SettingSpec{Key: "auth.oidc.client_id", Type: domain.SettingString,
		Description: "This server's client id at the OpenID Connect provider."}
	OIDCClientSecretSetting = domain.SettingSpec{Key: "auth.oidc.client_secret", Type: domain.SettingString, Secret: true,
		Description: "This server's client secret at the OpenID Connect provider (stored encrypted, shown redacted)."}
	OIDCNameSetting = domain.SettingSpec{Key: "auth.oidc.name", Type: domain.SettingString,
		Description: "The provider's name on the sign-in button (\"Sign in with <name>\"); empty uses the issuer's host."}
	OIDCAllowPrivateSetting = domain.SettingSpec{Key: "auth.oidc.allow_private", Type: domain.SettingBool, Default: "false",
		Description: "Let the server reach an issuer on a loopback or private address (a provider on the same host or LAN). Off by default."}
)

// OIDCSettings are the keys of sign-in with an identity provider.
var OIDCSettings = domain.Settings{OIDCIssuerSetting, OIDCClientIDSetting, OIDCClientSecretSetting, OIDCNameSetting, OIDCAllowPrivateSetting}

func validateIssuer(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return domain.Invalid("auth.oidc.issuer", "%q is not an issuer URL such as https://accounts.example.com", v)
	}
	return nil
}
