package main

import (
	"github.com/spf13/cobra"
)

type inviteConfig struct {
	callConfig
	Position string
	Role     string
}

func newInviteCmd() *cobra.Command {
	var cfg inviteConfig
	cmd := &cobra.Command{
		Use:   "invite <email> --position <p-…> [--role admin|member|viewer]",
		Short: "Invite a person by email: a pending human worker bound to them at their first sign-in (admin only)",
		Long: `invite calls the invite tool as --worker (default w-owner, an admin): it makes
a pending human worker in --position with the org role --role (default
member) and emails the sign-in link when the server can send mail
(transport.postmark holds a server_token and a from address); otherwise
not_sent says why. The link is printed either way. The person signs in to the web UI with the
identity provider (auth.oidc.*) and becomes that worker; until that provider
is set up, cannot_accept says the invitation cannot be accepted yet (it is
kept, and works once it is). Inviting the same email again resends;
invitations expire after auth.invite_ttl.`,
		Example: `  helix-org invite lee@example.com --position p-support --role viewer`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kv := []string{"email=" + args[0]}
			if cfg.Position != "" {
				kv = append(kv, "position="+cfg.Position)
			}
			if cfg.Role != "" {
				kv = append(kv, "role="+cfg.Role)
			}
			return runCall(cmd, cfg.callConfig, "invite", kv)
		},
	}
	cfg.bind(cmd)
	bindOutput(cmd, &cfg.Output, outJSON, outYAML, outTable)
	cmd.Flags().StringVar(&cfg.Position, "position", "", "the position (p-…) the person's worker takes")
	cmd.Flags().StringVar(&cfg.Role, "role", "", "their org role: admin, member (default) or viewer")
	return cmd
}

func newInvitationsCmd() *cobra.Command {
	var cfg callConfig
	cmd := &cobra.Command{
		Use:   "invitations",
		Short: "List invitations (email, worker, role, status, expiry); revoke one with invitations revoke <id>",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCall(cmd, cfg, "list_invitations", nil)
		},
	}
	cfg.bind(cmd)
	bindOutput(cmd, &cfg.Output, outJSON, outYAML, outTable)
	cmd.AddCommand(newInvitationsRevokeCmd())
	return cmd
}

func newInvitationsRevokeCmd() *cobra.Command {
	var cfg callConfig
	cmd := &cobra.Command{
		Use:   "revoke <inv-…>",
		Short: "Withdraw an invitation not yet accepted; its pending worker is dismissed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd, cfg, "revoke_invitation", []string{"id=" + args[0]})
		},
	}
	cfg.bind(cmd)
	bindOutput(cmd, &cfg.Output, outJSON, outYAML, outTable)
	return cmd
}
