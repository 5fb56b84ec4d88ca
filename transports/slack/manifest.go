package slack

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// ManifestOptions shape the app manifest an operator installs.
type ManifestOptions struct {
	// Name is the app's and its bot's name; default "helix-org".
	Name string
	// URL is the server's public base URL (https). With it the manifest
	// lists the install flow's redirect URL and, without Socket Mode, the
	// Events API request URL.
	URL string
	// SocketMode has Slack send events over a connection the server
	// opens, so events need no public URL.
	SocketMode bool
}

// BotEvents are the events the app subscribes to: messages in public and
// private channels, DMs and group DMs the bot is in, and mentions of it.
var BotEvents = []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim"}

// Manifest is the app manifest (Slack's "Create an app from a manifest")
// for this server: the bot scopes and event subscriptions the transport
// needs, Socket Mode or the Events API, and the OAuth redirect URL.
func Manifest(o ManifestOptions) ([]byte, error) {
	if o.Name == "" {
		o.Name = "helix-org"
	}
	base, err := publicURL(o.URL)
	if err != nil {
		return nil, err
	}
	if base == "" && !o.SocketMode {
		return nil, errors.New("url: the Events API needs the server's public https URL; give it, or use Socket Mode")
	}
	events := map[string]any{"bot_events": BotEvents}
	if !o.SocketMode {
		events["request_url"] = base + "/slack/events"
	}
	oauth := map[string]any{"scopes": map[string]any{"bot": BotScopes}}
	if base != "" {
		oauth["redirect_urls"] = []string{base + CallbackPath}
	}
	m := map[string]any{
		"_metadata":           map[string]any{"major_version": 1, "minor_version": 1},
		"display_information": map[string]any{"name": o.Name, "description": "Workers of a helix-org organisation, in Slack"},
		"features": map[string]any{
			"bot_user": map[string]any{"display_name": o.Name, "always_online": true},
			"app_home": map[string]any{"home_tab_enabled": false, "messages_tab_enabled": true, "messages_tab_read_only_enabled": false},
		},
		"oauth_config": oauth,
		"settings": map[string]any{"event_subscriptions": events, "interactivity": map[string]any{"is_enabled": false},
			"org_deploy_enabled": false, "socket_mode_enabled": o.SocketMode, "token_rotation_enabled": false},
	}
	return json.MarshalIndent(m, "", "  ")
}

// publicURL checks the server's public base URL: https, no path beyond
// "/", no query.
func publicURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return "", errors.New("url: " + quote(raw) + " is not a URL such as https://org.example.com")
	case u.Scheme != "https":
		return "", errors.New("url: Slack sends requests and people only to https URLs")
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("url: give the server's base URL, such as https://org.example.com, without a path")
	}
	return "https://" + u.Host, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
