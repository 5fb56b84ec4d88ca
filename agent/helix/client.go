package helix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxAnswer bounds what is read of one answer that is not a stream, and
// maxText what is kept of a streamed one's text.
const (
	maxAnswer = 4 << 20
	maxText   = 1 << 20
)

// Client calls one Helix control plane with an API key. HTTP should come
// from safedial, so a configured URL cannot reach what it should not.
type Client struct {
	BaseURL string
	APIKey  string
	HTTP    *http.Client
}

// StatusError is an answer Helix gave with an HTTP error status.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("helix %s %s: %d %s: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Body)
}

// IsNotFound reports whether err is Helix saying 404.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

func (c *Client) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("helix %s %s: encode: %w", method, path, err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("helix %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// send makes one call and returns the response when its status is a
// success; the caller closes the body.
func (c *Client) send(ctx context.Context, method, path string, body any, accept string) (*http.Response, error) {
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("helix %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return nil, &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	return resp, nil
}

// do makes one JSON call, decoding the answer into out when it is not nil.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("helix %s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

func esc(s string) string { return url.PathEscape(s) }

// WhoAmI says who the API key belongs to.
func (c *Client) WhoAmI(ctx context.Context) (UserStatus, error) {
	var us UserStatus
	err := c.do(ctx, http.MethodGet, "/api/v1/status", nil, &us)
	return us, err
}

// Providers lists the inference providers Helix has configured.
func (c *Client) Providers(ctx context.Context) ([]string, error) {
	var ps []string
	err := c.do(ctx, http.MethodGet, "/api/v1/providers", nil, &ps)
	return ps, err
}

// Models lists one provider's models.
func (c *Client) Models(ctx context.Context, provider string) ([]Model, error) {
	var resp struct {
		Data []Model `json:"data"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/models?provider="+url.QueryEscape(provider), nil, &resp)
	return resp.Data, err
}

// ApplyProject creates or updates a project and its agent app.
func (c *Client) ApplyProject(ctx context.Context, req ProjectApplyRequest) (ProjectApplyResponse, error) {
	var resp ProjectApplyResponse
	if err := c.do(ctx, http.MethodPut, "/api/v1/projects/apply", req, &resp); err != nil {
		return resp, err
	}
	if resp.ProjectID == "" {
		return resp, errors.New("helix PUT /api/v1/projects/apply: the answer has no project_id")
	}
	return resp, nil
}

// Project reads a project.
func (c *Client) Project(ctx context.Context, id string) (Project, error) {
	var p Project
	err := c.do(ctx, http.MethodGet, "/api/v1/projects/"+esc(id), nil, &p)
	return p, err
}

// CreateRepo creates a Helix-hosted repository.
func (c *Client) CreateRepo(ctx context.Context, req RepoCreateRequest) (Repo, error) {
	var r Repo
	if err := c.do(ctx, http.MethodPost, "/api/v1/git/repositories", req, &r); err != nil {
		return r, err
	}
	if r.ID == "" {
		return r, errors.New("helix POST /api/v1/git/repositories: the answer has no id")
	}
	return r, nil
}

// AttachRepo attaches a repository to a project as its primary one.
func (c *Client) AttachRepo(ctx context.Context, project, repo string) error {
	base := "/api/v1/projects/" + esc(project) + "/repositories/" + esc(repo)
	if err := c.do(ctx, http.MethodPut, base+"/attach", nil, nil); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, base+"/primary", nil, nil)
}

// Branches lists a repository's branches by name.
func (c *Client) Branches(ctx context.Context, repo string) ([]string, error) {
	var bs []string
	err := c.do(ctx, http.MethodGet, "/api/v1/git/repositories/"+esc(repo)+"/branches", nil, &bs)
	return bs, err
}

// CreateBranch makes branch from base.
func (c *Client) CreateBranch(ctx context.Context, repo, branch, base string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/git/repositories/"+esc(repo)+"/branches", BranchRequest{BranchName: branch, BaseBranch: base}, nil)
}

// PutFile commits one file on a branch (its content base64, as Helix takes it).
func (c *Client) PutFile(ctx context.Context, repo string, f FileRequest) error {
	return c.do(ctx, http.MethodPut, "/api/v1/git/repositories/"+esc(repo)+"/contents", f, nil)
}

// App reads an app, its config raw.
func (c *Client) App(ctx context.Context, id string) (App, error) {
	var a App
	err := c.do(ctx, http.MethodGet, "/api/v1/apps/"+esc(id), nil, &a)
	return a, err
}

// UpdateApp writes an app's config back. Helix reads the app's id from
// the body.
func (c *Client) UpdateApp(ctx context.Context, a App) error {
	return c.do(ctx, http.MethodPut, "/api/v1/apps/"+esc(a.ID), a, nil)
}

// Secrets lists the key's user's secrets, without their values.
func (c *Client) Secrets(ctx context.Context) ([]Secret, error) {
	var ss []Secret
	err := c.do(ctx, http.MethodGet, "/api/v1/secrets", nil, &ss)
	return ss, err
}

// PutAppSecret sets a secret scoped to one app, which Helix keeps
// encrypted and substitutes for ${name} in that app's config when its
// agent runs: updated in place when the app has one of that name, so
// secrets do not pile up.
func (c *Client) PutAppSecret(ctx context.Context, app, name, value string) error {
	ss, err := c.Secrets(ctx)
	if err != nil {
		return err
	}
	req := SecretRequest{Name: name, Value: value, AppID: app}
	for _, s := range ss {
		if s.Name == name && s.AppID == app {
			return c.do(ctx, http.MethodPut, "/api/v1/secrets/"+esc(s.ID), req, nil)
		}
	}
	return c.do(ctx, http.MethodPost, "/api/v1/secrets", req, nil)
}

// QueueMessage hands a prompt to a session's durable queue: Helix keeps
// it until the session's agent takes it, however long its desktop takes.
func (c *Client) QueueMessage(ctx context.Context, session, content string) (MessageResponse, error) {
	var r MessageResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/sessions/"+esc(session)+"/messages", MessageRequest{Content: content}, &r)
	return r, err
}

// CancelTurn stops what a session's agent is doing now; the session
// stays, for the next prompt.
func (c *Client) CancelTurn(ctx context.Context, session string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/sessions/"+esc(session)+"/cancel", nil, nil)
}

// Output reads the state of a session's last interaction.
func (c *Client) Output(ctx context.Context, session string) (Output, error) {
	var o Output
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions/"+esc(session)+"/output", nil, &o)
	return o, err
}

// ChatAnswer is what a streamed chat said: its session, the answer's
// text, and the error the stream ended with, if any.
type ChatAnswer struct {
	SessionID string
	Text      string
	// StreamError is an error Helix sent on the stream after it had
	// opened the session (a cold start's race among them): the session
	// exists, the prompt did not reach its agent.
	StreamError string
}

// Chat starts a session (or continues one) with a streamed chat, reading
// the answer to its end. onSession hears the session's id as soon as
// Helix names it, and onText each piece of the answer.
func (c *Client) Chat(ctx context.Context, req ChatRequest, onSession func(id string), onText func(string)) (ChatAnswer, error) {
	req.Stream = true
	resp, err := c.send(ctx, http.MethodPost, "/api/v1/sessions/chat", req, "text/event-stream")
	if err != nil {
		return ChatAnswer{}, err
	}
	defer resp.Body.Close()
	var ans ChatAnswer
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "" || data == "[DONE]" {
			continue
		}
		var ch ChatChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return ans, fmt.Errorf("helix POST /api/v1/sessions/chat: a chunk of the stream: %w", err)
		}
		if ch.ID != "" && ans.SessionID == "" {
			ans.SessionID = ch.ID
			if onSession != nil {
				onSession(ch.ID)
			}
		}
		if ch.Error != nil {
			ans.StreamError = ch.Error.Message
			break
		}
		for _, choice := range ch.Choices {
			if choice.Delta.Content != "" {
				if text.Len() < maxText {
					text.WriteString(choice.Delta.Content)
				}
				if onText != nil {
					onText(choice.Delta.Content)
				}
			}
		}
	}
	ans.Text = text.String()
	if err := sc.Err(); err != nil {
		return ans, fmt.Errorf("helix POST /api/v1/sessions/chat: read the stream: %w", err)
	}
	if ans.SessionID == "" && ans.StreamError == "" {
		return ans, errors.New("helix POST /api/v1/sessions/chat: the stream named no session")
	}
	return ans, nil
}
