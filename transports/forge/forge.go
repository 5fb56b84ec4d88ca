// Package forge opens and merges pull requests with the server's forge
// credentials: GitHub's REST API (POST /repos/{owner}/{repo}/pulls, PUT
// …/pulls/{n}/merge) and GitLab's (POST /projects/:id/merge_requests, PUT
// …/merge_requests/:iid/merge). The token goes only into the request's
// header, never into an error or a log. It imports only domain.
package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Kinds of forge, as attach_repository takes them.
const (
	GitHub = "github"
	GitLab = "gitlab"
)

// Client talks to one forge.
type Client struct {
	Kind string
	// BaseURL is GitHub's API root (https://api.github.com) or GitLab's
	// instance (https://gitlab.com).
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// PullRequest is a pull request (GitHub) or merge request (GitLab).
type PullRequest struct {
	Number int    `json:"number" jsonschema:"its number (GitHub) or iid (GitLab)"`
	URL    string `json:"url" jsonschema:"its page on the forge"`
	State  string `json:"state" jsonschema:"open, closed or merged as the forge says"`
	Head   string `json:"head" jsonschema:"the branch it merges"`
	Base   string `json:"base" jsonschema:"the branch it merges into"`
}

// Open opens a pull request of head into base on project (owner/repo).
func (c Client) Open(ctx context.Context, project, head, base, title, body string) (PullRequest, error) {
	switch c.Kind {
	case GitHub:
		var out struct {
			Number  int                  `json:"number"`
			HTMLURL string               `json:"html_url"`
			State   string               `json:"state"`
			Head    struct{ Ref string } `json:"head"`
			Base    struct{ Ref string } `json:"base"`
		}
		err := c.do(ctx, http.MethodPost, "/repos/"+project+"/pulls", map[string]any{"title": title, "body": body, "head": head, "base": base}, &out)
		return PullRequest{Number: out.Number, URL: out.HTMLURL, State: out.State, Head: out.Head.Ref, Base: out.Base.Ref}, err
	case GitLab:
		var out struct {
			IID          int    `json:"iid"`
			WebURL       string `json:"web_url"`
			State        string `json:"state"`
			SourceBranch string `json:"source_branch"`
			TargetBranch string `json:"target_branch"`
		}
		err := c.do(ctx, http.MethodPost, "/api/v4/projects/"+url.PathEscape(project)+"/merge_requests",
			map[string]any{"title": title, "description": body, "source_branch": head, "target_branch": base}, &out)
		return PullRequest{Number: out.IID, URL: out.WebURL, State: out.State, Head: out.SourceBranch, Base: out.TargetBranch}, err
	}
	return PullRequest{}, domain.Invalid("forge", "%q is not a forge (valid: %s, %s)", c.Kind, GitHub, GitLab)
}

// Merge merges pull request number of project.
func (c Client) Merge(ctx context.Context, project string, number int) error {
	switch c.Kind {
	case GitHub:
		return c.do(ctx, http.MethodPut, fmt.Sprintf("/repos/%s/pulls/%d/merge", project, number), map[string]any{}, nil)
	case GitLab:
		return c.do(ctx, http.MethodPut, fmt.Sprintf("/api/v4/projects/%s/merge_requests/%d/merge", url.PathEscape(project), number), map[string]any{}, nil)
	}
	return domain.Invalid("forge", "%q is not a forge (valid: %s, %s)", c.Kind, GitHub, GitLab)
}

func (c Client) do(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.Kind, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Kind == GitHub {
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("Authorization", "Bearer "+c.Token)
	} else {
		req.Header.Set("PRIVATE-TOKEN", c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s %s: %s", c.Kind, method, path, strings.ReplaceAll(err.Error(), c.Token, "[redacted]"))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(data))
		if c.Token != "" {
			msg = strings.ReplaceAll(msg, c.Token, "[redacted]")
		}
		return fmt.Errorf("%s %s %s: %s: %.300s", c.Kind, method, path, resp.Status, msg)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s %s: the answer is not the documented JSON: %w", c.Kind, method, path, err)
	}
	return nil
}
