package tools

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// The identity provider people sign in to the web UI with (the UI holds
// the rest of its settings). They live here because an invitation is
// accepted only by signing in with it: invite says when that cannot be.
var (
	OIDCIssuerSetting = domain.SettingSpec{Key: "auth.oidc.issuer", Type: domain.SettingString, Validate: validateIssuer,
		Description: "The OpenID Connect issuer people sign in to the web UI with (https://accounts.example.com); empty turns that sign-in off. Its redirect URI is <auth.public_url>/ui/signin/oidc/callback."}
	OIDCClientIDSetting = domain.SettingSpec{Key: "auth.oidc.client_id", Type: domain.SettingString,
		Description: "This server's client id at the OpenID Connect provider."}
	OIDCClientSecretSetting = domain.SettingSpec{Key: "auth.oidc.client_secret", Type: domain.SettingString, Secret: true,
		Description: "This server's client secret at the OpenID Connect provider (stored encrypted, shown redacted)."}
)

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

// IdentityProviderUnset names the settings sign-in with an identity
// provider still lacks (auth.oidc.issuer, auth.oidc.client_id); none when
// people can sign in with one.
func IdentityProviderUnset(ctx context.Context, st *store.Store) []string {
	var unset []string
	for _, spec := range []domain.SettingSpec{OIDCIssuerSetting, OIDCClientIDSetting} {
		if v, _ := st.SettingOr(ctx, spec); v == "" {
			unset = append(unset, spec.Key)
		}
	}
	return unset
}

// InvitationUnacceptable says why no invitation can be accepted now: the
// invitee signs in with the identity provider, and there is none. ""
// when there is. The web UI's People page says it after an invite.
func InvitationUnacceptable(ctx context.Context, st *store.Store) string {
	unset := IdentityProviderUnset(ctx, st)
	if len(unset) == 0 {
		return ""
	}
	verb := "is"
	if len(unset) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("No one can accept this invitation yet: an invited person signs in with the identity provider, and this server has none (%s %s not set). "+
		"Set %s, %s and, if the provider issued one, %s (helix-org config set, or the Settings page); the invitation is kept, and its link works once they are set.",
		strings.Join(unset, " and "), verb, OIDCIssuerSetting.Key, OIDCClientIDSetting.Key, OIDCClientSecretSetting.Key)
}
