package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helixml/helix-org/transports/slack"
)

func newSlackCmd() *cobra.Command {
	return group("slack", "Set up the Slack app", newSlackManifestCmd())
}

func newSlackManifestCmd() *cobra.Command {
	var o slack.ManifestOptions
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Print the Slack app manifest to create the app from",
		Long: `manifest prints the app manifest to paste into Slack's "Create New App" →
"From an app manifest": the bot scopes and events the slack transport
needs, and Socket Mode (the default: the server connects to Slack, so
events need no public URL) or, with --socket-mode=false, the Events API
at <url>/slack/events. With --url the install flow's redirect URL,
<url>/slack/oauth/callback, is listed too.

Then, from the app's pages, set transport.slack: app_token (Basic
Information → App-Level Tokens, scope connections:write) for Socket Mode
or signing_secret for the Events API, and client_id and client_secret to
install it from /ui/slack/install as the owner — or install it from Slack
and set bot_token yourself.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.URL != "" {
				o.URL = orgURL(cmd.Context(), o.URL) // --org: the org's own routes
			}
			b, err := slack.Manifest(o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	cmd.Flags().StringVar(&o.URL, "url", "", "the server's public base URL (https)")
	cmd.Flags().StringVar(&o.Name, "name", "helix-org", "the app's and its bot's name")
	cmd.Flags().BoolVar(&o.SocketMode, "socket-mode", true, "receive events over Socket Mode rather than at <url>/slack/events")
	return cmd
}
