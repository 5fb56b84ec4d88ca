package tools

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/forge"
)

// The forge credentials: the server's, never an agent's. open_pull_request
// and merge_pull_request use them; no run's environment or file holds them.
var (
	GitHubTokenSetting = domain.SettingSpec{Key: "github.token", Type: domain.SettingString, Secret: true,
		Description: "GitHub token the server pushes workers' branches and opens and merges their pull requests with (contents and pull requests: write)."}
	GitHubAPISetting = domain.SettingSpec{Key: "github.api_url", Type: domain.SettingString, Default: "https://api.github.com",
		Description: "GitHub's REST API root: https://<host>/api/v3 for GitHub Enterprise Server."}
	GitLabTokenSetting = domain.SettingSpec{Key: "gitlab.token", Type: domain.SettingString, Secret: true,
		Description: "GitLab token the server pushes workers' branches and opens and merges their merge requests with (api, write_repository)."}
	GitLabURLSetting = domain.SettingSpec{Key: "gitlab.url", Type: domain.SettingString, Default: "https://gitlab.com",
		Description: "The GitLab instance: https://gitlab.com or a self-managed host."}
)

// forgeClient is the client of a workspace's forge, with its token; the
// SSRF guard applies unless transport.webhook.allow_private lifts it.
func forgeClient(ctx context.Context, env *Env, ws domain.Workspace) (forge.Client, error) {
	c := forge.Client{Kind: ws.Forge, HTTP: safedial.NewClient(safedial.Options{AllowPrivate: func(ctx context.Context) bool {
		return env.Store.BoolSetting(ctx, safedial.AllowPrivateSetting)
	}})}
	token, url := GitHubTokenSetting, GitHubAPISetting
	if ws.Forge == forge.GitLab {
		token, url = GitLabTokenSetting, GitLabURLSetting
	}
	c.Token, _ = env.Store.SettingOr(ctx, token)
	c.BaseURL, _ = env.Store.SettingOr(ctx, url)
	if c.Token == "" {
		return c, domain.Invalid("forge", "the server has no %s token: an operator sets it with `helix-org config set %s …`", ws.Forge, token.Key)
	}
	return c, nil
}

// pushAuth is the http.extraHeader that carries the token to the forge's
// git server as HTTP basic auth, the way each forge documents for tokens.
func pushAuth(c forge.Client) string {
	user := "x-access-token"
	if c.Kind == forge.GitLab {
		user = "oauth2"
	}
	return "http.extraHeader=Authorization: Basic " + basic(user, c.Token)
}

// defaultForge guesses a repository's forge and project from its URL:
// github.com, or the host of gitlab.url; "" when it cannot tell.
func defaultForge(ctx context.Context, env *Env, raw string) (kind, project string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", ""
	}
	project = strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	gl, _ := env.Store.SettingOr(ctx, GitLabURLSetting)
	switch gu, _ := url.Parse(gl); {
	case u.Hostname() == "github.com":
		return forge.GitHub, project
	case gu != nil && u.Hostname() == gu.Hostname():
		return forge.GitLab, project
	}
	return "", project
}

func basic(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}
