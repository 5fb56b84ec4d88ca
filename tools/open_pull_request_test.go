package tools

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store/designdocs/gittest"
	"github.com/helixml/helix-org/store/workspace"
	"github.com/helixml/helix-org/transports/forge"
)

// fakeForge speaks GitHub's POST /repos/{o}/{r}/pulls and GitLab's POST
// /api/v4/projects/:id/merge_requests, answering with the documented
// shapes, and records what it was sent.
type fakeForge struct {
	*httptest.Server
	mu  sync.Mutex
	got []string // "METHOD path auth body"
}

func newFakeForge(t *testing.T) *fakeForge {
	f := &fakeForge{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Title, Body, Head, Base string }
		f.record(r, &in)
		json.NewEncoder(w).Encode(map[string]any{"number": 7, "state": "open", "title": in.Title,
			"html_url": "https://github.com/" + r.PathValue("owner") + "/" + r.PathValue("repo") + "/pull/7",
			"head":     map[string]any{"ref": in.Head}, "base": map[string]any{"ref": in.Base}})
	})
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Title        string `json:"title"`
			SourceBranch string `json:"source_branch"`
			TargetBranch string `json:"target_branch"`
		}
		f.record(r, &in)
		json.NewEncoder(w).Encode(map[string]any{"id": 1, "iid": 3, "state": "opened", "title": in.Title,
			"web_url": "https://gitlab.example/" + r.PathValue("id") + "/-/merge_requests/3", "source_branch": in.SourceBranch, "target_branch": in.TargetBranch})
	})
	merged := func(w http.ResponseWriter, r *http.Request) {
		f.record(r, &struct{}{})
		json.NewEncoder(w).Encode(map[string]any{"merged": true, "state": "merged", "message": "Pull Request successfully merged"})
	}
	mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/merge", merged)
	mux.HandleFunc("PUT /api/v4/projects/{id}/merge_requests/{iid}/merge", merged)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeForge) record(r *http.Request, in any) {
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, in)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization")+r.Header.Get("PRIVATE-TOKEN")+" "+string(body))
}

const forgeToken = "ghp_s3cr3t-forge-token"

func TestOpenPullRequest(t *testing.T) {
	fake := newFakeForge(t)
	// attached: w-echo's workspace is a checkout of app.git (a local bare
	// repository the push goes to) on forge kind, with an uncommitted file.
	attached := func(kind string) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			ctx := t.Context()
			root := t.TempDir()
			url := "file://" + gittest.Bare(t, gittest.Repo(t, filepath.Join(root, "app")), filepath.Join(root, "app.git"))
			withRepoRoots(root)(t, f)
			tokenKey, urlKey := GitHubTokenSetting, GitHubAPISetting
			if kind == forge.GitLab {
				tokenKey, urlKey = GitLabTokenSetting, GitLabURLSetting
			}
			for spec, v := range map[*domain.SettingSpec]string{&tokenKey: forgeToken, &urlKey: fake.URL, &safedial.AllowPrivateSetting: "true"} {
				if err := f.env.Store.SetSetting(ctx, *spec, v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := call[domain.Workspace](t, f.env, "attach_repository", map[string]any{"worker": "w-echo", "url": url, "forge": kind, "project": "acme/app"}); err != nil {
				t.Fatal(err)
			}
			ws, _ := f.env.Store.Workspace(ctx, "w-echo")
			dir := filepath.Join(t.TempDir(), "workspace")
			if _, err := workspace.Prepare(ctx, dir, ws, workspace.Author{ID: "w-echo", Name: "Echo"}); err != nil {
				t.Fatal(err)
			}
			must(t)(struct{}{}, f.env.Store.RecordWorkspace(ctx, "w-echo", dir, ws.Attachment(), ""))
			os.WriteFile(filepath.Join(dir, "fix.txt"), []byte("fixed\n"), 0o644)
		}
	}
	pushed := func(t *testing.T, f fixture, _ forge.PullRequest) {
		ws, _ := f.env.Store.Workspace(t.Context(), "w-echo")
		bare := strings.TrimPrefix(ws.URL, "file://")
		if got := gittest.Git(t, bare, "show", "helix/w-echo:fix.txt"); got != "fixed" {
			t.Errorf("the pushed branch's fix.txt = %q", got)
		}
		if got := gittest.Git(t, bare, "log", "-1", "--format=%an", "helix/w-echo"); got != "Echo" {
			t.Errorf("the pushed commit's author = %q, want the worker", got)
		}
		filepath.WalkDir(ws.Dir, func(path string, d os.DirEntry, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), forgeToken) {
				t.Errorf("the forge token is in %s, which the agent can read", path)
			}
			return nil
		})
		fake.mu.Lock()
		defer fake.mu.Unlock()
		sent := strings.Join(fake.got, "\n")
		if !strings.Contains(sent, forgeToken) || !strings.Contains(sent, `"Fix the login"`) {
			t.Errorf("the forge was sent %q, want the request with the server's token", sent)
		}
	}
	httpSetup, httpPushed := overHTTP(fake)
	runTable(t, "open_pull_request", []toolCase[forge.PullRequest]{
		{name: "GitHub: pushed and opened", setup: attached(forge.GitHub), caller: "w-echo", args: map[string]any{"title": "Fix the login", "body": "Closes #1"},
			want:  forge.PullRequest{Number: 7, URL: "https://github.com/acme/app/pull/7", State: "open", Head: "helix/w-echo", Base: "main"},
			check: pushed},
		{name: "GitLab: pushed and opened", setup: attached(forge.GitLab), caller: "w-echo", args: map[string]any{"title": "Fix the login"},
			want:  forge.PullRequest{Number: 3, URL: "https://gitlab.example/acme/app/-/merge_requests/3", State: "opened", Head: "helix/w-echo", Base: "main"},
			check: pushed},
		{name: "over smart HTTP: the token reaches git's server in a header, never the URL", setup: httpSetup, caller: "w-echo",
			args: map[string]any{"title": "Fix the login"},
			want: forge.PullRequest{Number: 7, URL: "https://github.com/acme/app/pull/7", State: "open", Head: "helix/w-echo", Base: "main"},
			check: func(t *testing.T, f fixture, _ forge.PullRequest) {
				ws, _ := f.env.Store.Workspace(t.Context(), "w-echo")
				if strings.Contains(ws.URL, forgeToken) {
					t.Errorf("the token is in the recorded URL %s", ws.URL)
				}
				httpPushed(t)
			}},
		{name: "no title", setup: attached(forge.GitHub), caller: "w-echo", args: map[string]any{}, wantErr: []string{"title"}},
		{name: "nothing attached", caller: "w-echo", args: map[string]any{"title": "x"}, wantErr: []string{"workspace", "no repository attached"}},
		{name: "no token on the server", setup: func(t *testing.T, f fixture) {
			attached(forge.GitHub)(t, f)
			must(t)(struct{}{}, f.env.Store.SetSetting(t.Context(), GitHubTokenSetting, ""))
		}, caller: "w-echo", args: map[string]any{"title": "x"}, wantErr: []string{"forge", "github.token"}},
	})
}

// overHTTP attaches a repository served over git's smart HTTP behind a
// proxy that lets a push through only with the server's token as basic
// auth (x-access-token, as GitHub takes a token), and prepares w-echo's
// checkout of it with a change to push.
func overHTTP(fake *fakeForge) (setup func(t *testing.T, f fixture), pushed func(t *testing.T)) {
	var root string
	return func(t *testing.T, f fixture) {
			ctx := t.Context()
			root = t.TempDir()
			gittest.Bare(t, gittest.Repo(t, filepath.Join(root, "src")), filepath.Join(root, "app.git"))
			backend, _ := url.Parse(gittest.Serve(t, root, true).URL)
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+forgeToken))
			proxy := httputil.NewSingleHostReverseProxy(backend)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.RawQuery, "git-receive-pack") || strings.HasSuffix(r.URL.Path, "git-receive-pack") {
					if r.Header.Get("Authorization") != want {
						w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
						http.Error(w, "push needs the token", http.StatusUnauthorized)
						return
					}
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			for spec, v := range map[*domain.SettingSpec]string{&GitHubTokenSetting: forgeToken, &GitHubAPISetting: fake.URL,
				&safedial.AllowPrivateSetting: "true", &SpecAllowPrivateSetting: "true", &SpecClonesDirSetting: t.TempDir()} {
				if err := f.env.Store.SetSetting(ctx, *spec, v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := call[domain.Workspace](t, f.env, "attach_repository", map[string]any{"worker": "w-echo", "url": front.URL + "/app.git", "forge": "github", "project": "acme/app"}); err != nil {
				t.Fatal(err)
			}
			ws, _ := f.env.Store.Workspace(ctx, "w-echo")
			dir := filepath.Join(t.TempDir(), "workspace")
			if _, err := workspace.Prepare(ctx, dir, ws, workspace.Author{ID: "w-echo", Name: "Echo"}); err != nil {
				t.Fatal(err)
			}
			must(t)(struct{}{}, f.env.Store.RecordWorkspace(ctx, "w-echo", dir, ws.Attachment(), ""))
			os.WriteFile(filepath.Join(dir, "fix.txt"), []byte("fixed\n"), 0o644)
		}, func(t *testing.T) {
			if got := gittest.Git(t, filepath.Join(root, "app.git"), "show", "helix/w-echo:fix.txt"); got != "fixed" {
				t.Errorf("the pushed branch's fix.txt = %q", got)
			}
		}
}
