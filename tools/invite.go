package tools

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// Settings of inviting people.
var (
	InviteTTLSetting = domain.SettingSpec{Key: "auth.invite_ttl", Type: domain.SettingDuration, Default: "168h",
		Description: "How long an invitation (invite) can be accepted by signing in; inviting the same email again renews it."}
	PublicURLSetting = domain.SettingSpec{Key: "auth.public_url", Type: domain.SettingString,
		Description: "The URL people reach this server at (https://org.example.com): invitation links and the identity provider's redirect use it. Empty: links are relative, and the redirect follows the request's host.",
		Validate:    validatePublicURL}
)

func validatePublicURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return domain.Invalid("auth.public_url", "%q is not a base URL such as https://org.example.com", v)
	}
	return nil
}

type inviteIn struct {
	Email    string `json:"email" jsonschema:"the person's email address, as their identity provider verifies it (lee@example.com)"`
	Position string `json:"position,omitempty" jsonschema:"the position (p-…) their new human worker takes; below yours. Not needed to resend a pending invitation"`
	Role     string `json:"role,omitempty" jsonschema:"their org role: admin runs the org, member acts through the chart, viewer only reads; default member"`
}

type inviteOut struct {
	store.Invitation
	Resent bool   `json:"resent" jsonschema:"true when the email had a pending invitation, now renewed and sent again"`
	Link   string `json:"link" jsonschema:"the sign-in page to give them (/ui/signin?invitation=inv-…, absolute when auth.public_url is set); copy it to them when no email went"`
	// Sent says how the invitation went out: "email" (queued on the
	// worker's contact stream), or "" — copy the link to them.
	Sent   string `json:"sent,omitempty" jsonschema:"email when the invitation was emailed to them; absent when it was not: give them the link"`
	Stream string `json:"stream,omitempty" jsonschema:"the DM stream (s-dm-…) the emailed invitation went on, when it was emailed"`
	// NotSent says why no email went, when none did.
	NotSent string `json:"not_sent,omitempty" jsonschema:"why no email went, when none did (no email transport, or transport.postmark lacks what sending needs)"`
	// CannotAccept says why the invitation cannot be accepted yet, when it
	// cannot: it is kept, and works once sign-in is set up.
	CannotAccept string `json:"cannot_accept,omitempty" jsonschema:"why the person cannot accept the invitation yet, when they cannot: this server has no identity provider to sign in with, and the auth.oidc.* settings it names must be set first. The invitation is kept and works once they are. Absent when it can be accepted"`
}

func invite() Tool {
	return define("invite", "Invite a person to the org by email: makes a pending human worker in a position, bound to them when they sign in with the identity provider, and emails them the link (or returns it to copy). Inviting the same email again resends. An admin's.",
		func(ctx context.Context, env *Env, in inviteIn) (inviteOut, error) {
			if in.Email == "" {
				return inviteOut{}, domain.Required("email")
			}
			role := domain.OrgRole(in.Role)
			if role == "" {
				role = domain.RoleMember
			}
			inv, resent, err := env.Store.Invite(ctx, env.Caller, store.InviteSpec{Email: in.Email, Position: in.Position, Role: role,
				TTL: env.Store.DurationSetting(ctx, InviteTTLSetting)})
			if err != nil {
				return inviteOut{}, err
			}
			out := inviteOut{Invitation: inv, Resent: resent, Link: inviteLink(ctx, env, inv), CannotAccept: InvitationUnacceptable(ctx, env.Store)}
			if out.NotSent = EmailUnready(ctx, env); out.NotSent == "" {
				out.Sent, out.Stream, err = sendInvitation(ctx, env, inv, out.Link)
			}
			return out, err
		}, enum("role", domain.OrgRoles)).annotated("Invite a person", openWorld)
}

// inviteLink is the sign-in page the invitation points at; absolute when
// auth.public_url says where the server is.
func inviteLink(ctx context.Context, env *Env, inv store.Invitation) string {
	base, _ := env.Store.SettingOr(ctx, PublicURLSetting)
	return strings.TrimSuffix(base, "/") + env.Root + "/ui/signin?invitation=" + url.QueryEscape(inv.ID)
}

// EmailUnready says why an invitation cannot be emailed now: the server
// has no email transport, or its settings lack what sending needs. ""
// when it can. The web UI's People page says it after an invite.
func EmailUnready(ctx context.Context, env *Env) string {
	spec, err := env.Store.Transports().Contact("email", "email")
	if err != nil {
		return "this server has no email transport: copy the link to them"
	}
	if spec.Ready == nil {
		return ""
	}
	if err := spec.Ready(func(set domain.SettingSpec) string {
		v, _ := env.Store.SettingOr(ctx, set)
		return v
	}); err != nil {
		return fmt.Sprintf("no email went, %v: copy the link to them", err)
	}
	return ""
}

// sendInvitation emails the link: the pending worker's contact becomes
// the address, and a DM from the inviter is relayed to it through the
// outbox like any message to a person (list_deliveries shows it go).
func sendInvitation(ctx context.Context, env *Env, inv store.Invitation, link string) (sent, stream string, err error) {
	if _, err := env.Store.SetContact(ctx, env.Caller, inv.Worker, store.Contact{Kind: "email", Address: inv.Email}); err != nil {
		return "", "", fmt.Errorf("set %s's email contact: %w", inv.Worker, err)
	}
	dm, err := env.Store.EnsureDM(ctx, env.Caller, inv.Worker)
	if err != nil {
		return "", "", err
	}
	body := fmt.Sprintf("You are invited to join the organisation as %s (%s), until %s.\n\nSign in with your company account at:\n%s\n",
		inv.Role, inv.Worker, inv.ExpiresAt.Format("2 Jan 2006 15:04 MST"), link)
	if _, err := appendMessage(ctx, env, dm.ID, envelope{Subject: "Your invitation to the organisation", Body: body, To: []string{inv.Worker}}); err != nil {
		return "", "", err
	}
	return "email", dm.ID, nil
}
