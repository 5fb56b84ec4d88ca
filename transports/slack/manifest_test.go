package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/transports/slack"
)

// TestManifest: the manifest asks for what the transport needs, with
// Socket Mode or the Events API; URLs it would list must be https.
func TestManifest(t *testing.T) {
	type settings struct {
		SocketMode bool `json:"socket_mode_enabled"`
		Events     struct {
			RequestURL string   `json:"request_url"`
			BotEvents  []string `json:"bot_events"`
		} `json:"event_subscriptions"`
	}
	type manifest struct {
		Settings settings `json:"settings"`
		OAuth    struct {
			RedirectURLs []string `json:"redirect_urls"`
			Scopes       struct {
				Bot []string `json:"bot"`
			} `json:"scopes"`
		} `json:"oauth_config"`
		Features struct {
			BotUser struct {
				DisplayName string `json:"display_name"`
			} `json:"bot_user"`
		} `json:"features"`
	}
	for _, tt := range []struct {
		name       string
		opts       slack.ManifestOptions
		socket     bool
		requestURL string
		redirects  []string
		err        string
	}{
		{"Socket Mode without a public URL", slack.ManifestOptions{SocketMode: true}, true, "", nil, ""},
		{"Socket Mode and the install flow", slack.ManifestOptions{SocketMode: true, URL: "https://org.example.com/"}, true, "", []string{"https://org.example.com/slack/oauth/callback"}, ""},
		{"the Events API", slack.ManifestOptions{URL: "https://org.example.com"}, false, "https://org.example.com/slack/events", []string{"https://org.example.com/slack/oauth/callback"}, ""},
		{"the Events API needs a URL", slack.ManifestOptions{}, false, "", nil, "the Events API needs the server's public https URL"},
		{"http", slack.ManifestOptions{URL: "http://org.example.com", SocketMode: true}, false, "", nil, "only to https URLs"},
		{"a path", slack.ManifestOptions{URL: "https://org.example.com/slack/events", SocketMode: true}, false, "", nil, "without a path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := slack.Manifest(tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			var m manifest
			if err != nil || json.Unmarshal(b, &m) != nil {
				t.Fatalf("manifest %s, %v", b, err)
			}
			if m.Settings.SocketMode != tt.socket || m.Settings.Events.RequestURL != tt.requestURL || !cmp.Equal(m.OAuth.RedirectURLs, tt.redirects) {
				t.Errorf("manifest %s", b)
			}
			if d := cmp.Diff([]string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim"}, m.Settings.Events.BotEvents); d != "" {
				t.Errorf("bot events (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"app_mentions:read", "channels:history", "groups:history", "im:history", "mpim:history", "chat:write"}, m.OAuth.Scopes.Bot); d != "" {
				t.Errorf("bot scopes (-want +got):\n%s", d)
			}
			if m.Features.BotUser.DisplayName != "helix-org" {
				t.Errorf("bot user %q", m.Features.BotUser.DisplayName)
			}
		})
	}
}
