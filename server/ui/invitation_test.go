package ui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/tools"
)

// TestInvitationWithoutIdentityProvider: while no identity provider is
// set up, invite says the invitation cannot be accepted yet and what to
// set, and the invitee who opens the link reads why instead of a token
// form they have no token for; a link naming no pending invitation gives
// nothing away. Once a provider is set up, the same link offers it.
func TestInvitationWithoutIdentityProvider(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	invite := func(email string) map[string]any {
		return o.call(t, "invite", map[string]any{"email": email, "position": "p-staff"})
	}
	ada := invite("ada@example.com")
	if got, _ := ada["cannot_accept"].(string); !strings.Contains(got, "No one can accept this invitation yet") ||
		!strings.Contains(got, "auth.oidc.issuer and auth.oidc.client_id are not set") || ada["status"] != "pending" {
		t.Errorf("invite = %v; want it pending, and cannot_accept naming auth.oidc.issuer and auth.oidc.client_id", ada)
	}
	revoked := invite("rev@example.com")
	o.call(t, "revoke_invitation", map[string]any{"id": revoked["id"]})
	if err := o.h.Store.SetSetting(t.Context(), tools.InviteTTLSetting, "1ms"); err != nil {
		t.Fatal(err)
	}
	expired := invite("late@example.com")
	if err := o.h.Store.DeleteSetting(t.Context(), tools.InviteTTLSetting.Key); err != nil {
		t.Fatal(err)
	}
	org := strings.TrimPrefix(o.base, "http://")
	unknown := "This invitation is unknown or has expired. Ask the person who invited you to invite you again."
	tests := []struct {
		name, link string
		want       []string
		hidden     string // what the page must not show
	}{
		{name: "pending", link: ada["link"].(string), want: []string{
			"This is an invitation to the organisation at " + org + " for ada@example.com.",
			"This server cannot accept invitations yet: its operator has not set up sign-in with an identity provider, which is how an invited person signs in. Ask the person who invited you; this link will work once it is set up, until the invitation expires."}},
		{name: "unknown", link: "/ui/signin?invitation=inv-nosuchinv0", want: []string{unknown}},
		{name: "revoked", link: revoked["link"].(string), want: []string{unknown}, hidden: "rev@example.com"},
		{name: "expired", link: expired["link"].(string), want: []string{unknown}, hidden: "late@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := uitest.Tab(t)
			uitest.Do(t, tab, chromedp.Navigate(o.base+tt.link), chromedp.WaitVisible(chromedp.CSS(`section.signin`)))
			text := strings.Join(strings.Fields(uitest.Run(t, tab, chromedp.Evaluate[string](`document.querySelector("section.signin").textContent`))), " ")
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the invitation page says %q; want %q", text, w)
				}
			}
			if tt.hidden != "" && strings.Contains(text, tt.hidden) {
				t.Errorf("the page of a dead invitation shows %q: %q", tt.hidden, text)
			}
			if n := uitest.Run(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('input[name="token"]').length`)); n != 0 {
				t.Errorf("the invitation page shows a token form")
			}
		})
	}

	// With a provider the link is the sign-in page, as before.
	withProvider(t, o)
	tab := uitest.Tab(t)
	uitest.Do(t, tab, chromedp.Navigate(o.base+ada["link"].(string)), chromedp.WaitVisible(chromedp.CSS(`a[href^="/ui/signin/oidc"]`)))
	if text := uitest.Run(t, tab, chromedp.Evaluate[string](`document.querySelector("main").textContent`)); !strings.Contains(text, "You were invited") ||
		strings.Contains(text, "cannot accept") {
		t.Errorf("with a provider, the invitation link's page says %q", text)
	}
	if got, _ := invite("bo@example.com")["cannot_accept"].(string); got != "" {
		t.Errorf("with a provider, invite says cannot_accept %q", got)
	}
}
