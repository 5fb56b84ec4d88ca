package tools

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/designdocs/gittest"
	"github.com/helixml/helix-org/store/workspace"
	"github.com/helixml/helix-org/transports/forge"
	"github.com/helixml/helix-org/transports/github"
	"github.com/helixml/helix-org/transports/inbound"
)

// withBuilderWorkspaces gives w-b1 and w-b2 checkouts of one repository
// on forge kind (project acme/app, a local bare repository the pushes go
// to), with the fake forge's URL and the server's token in the settings.
func withBuilderWorkspaces(fake *fakeForge, kind, project string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		ctx := t.Context()
		root := t.TempDir()
		url := "file://" + gittest.Bare(t, gittest.Repo(t, filepath.Join(root, "app")), filepath.Join(root, "app.git"))
		withBuilders(t, f)
		withRepoRoots(root)(t, f)
		tokenKey, urlKey := GitHubTokenSetting, GitHubAPISetting
		if kind == forge.GitLab {
			tokenKey, urlKey = GitLabTokenSetting, GitLabURLSetting
		}
		for spec, v := range map[*domain.SettingSpec]string{&tokenKey: forgeToken, &urlKey: fake.URL, &safedial.AllowPrivateSetting: "true"} {
			must(t)(struct{}{}, f.env.Store.SetSetting(ctx, *spec, v))
		}
		for _, w := range []string{"w-b1", "w-b2"} {
			mustCall[domain.Workspace](t, f.env, "attach_repository", map[string]any{"worker": w, "url": url, "forge": kind, "project": project})
			ws, _ := f.env.Store.Workspace(ctx, w)
			dir := filepath.Join(t.TempDir(), w)
			if _, err := workspace.Prepare(ctx, dir, ws, workspace.Author{ID: w, Name: w}); err != nil {
				t.Fatal(err)
			}
			must(t)(struct{}{}, f.env.Store.RecordWorkspace(ctx, w, dir, ws.Attachment(), ""))
			os.WriteFile(filepath.Join(dir, "users.sql"), []byte("create table users;\n"), 0o644)
		}
	}
}

// withPullRequests is an approved t-login whose items open pull requests
// as mode says; w-b1 builds item 1.
func withPullRequests(fake *fakeForge, kind, project, mode string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		withBuilderWorkspaces(fake, kind, project)(t, f)
		args := taskArgs("")
		args["pullRequests"] = mode
		mustCall[any](t, f.env, "create_spec_task", args)
		mustCall[any](t, f.as("w-echo"), "submit_spec", map[string]any{"task": "t-login", "design": "# Design\n", "items": loginItems})
		mustCall[any](t, f.env, "review_spec", map[string]any{"task": "t-login", "approve": true})
	}
}

// pullOut is what the table compares of a reported item.
type pullOut struct {
	Seq         int                     `json:"item"`
	State       string                  `json:"state"`
	PullRequest *domain.ItemPullRequest `json:"pullRequest"`
}

func TestSpecTaskPullRequests(t *testing.T) {
	fake := newFakeForge(t)
	deliver := map[string]any{"task": "t-login", "item": 1, "outcome": "delivered", "summary": "users table"}
	// branchPushed checks the builder's branch reached the repository with
	// its work, committed as the builder.
	branchPushed := func(t *testing.T, f fixture, _ pullOut) {
		ws, _ := f.env.Store.Workspace(t.Context(), "w-b1")
		bare := strings.TrimPrefix(ws.URL, "file://")
		if got := gittest.Git(t, bare, "show", "helix/w-b1:users.sql"); got != "create table users;" {
			t.Errorf("the pushed branch's users.sql = %q", got)
		}
		if got := gittest.Git(t, bare, "log", "-1", "--format=%an", "helix/w-b1"); got != "w-b1" {
			t.Errorf("the pushed commit's author = %q, want the builder", got)
		}
		view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
		if pr := view.Items[0].PullRequest; pr == nil || pr.Head != "helix/w-b1" {
			t.Errorf("get_spec_task shows item 1's pull request as %+v, want head helix/w-b1", pr)
		}
	}
	runTable(t, "report_item", []toolCase[pullOut]{
		{name: "GitHub: a pull request per item whose head is the builder's branch",
			setup: withPullRequests(fake, forge.GitHub, "acme/app", "item"), caller: "w-b1", args: deliver,
			want: pullOut{Seq: 1, State: "done", PullRequest: &domain.ItemPullRequest{Forge: "github", Project: "acme/app", Number: 7,
				URL: "https://github.com/acme/app/pull/7", Head: "helix/w-b1"}},
			check: branchPushed},
		{name: "GitLab: a merge request per item whose source is the builder's branch",
			setup: withPullRequests(fake, forge.GitLab, "acme/app", "item"), caller: "w-b1", args: deliver,
			want: pullOut{Seq: 1, State: "done", PullRequest: &domain.ItemPullRequest{Forge: "gitlab", Project: "acme/app", Number: 3,
				URL: "https://gitlab.example/acme/app/-/merge_requests/3", Head: "helix/w-b1"}},
			check: branchPushed},
		{name: "per task: none while items are still worked",
			setup: withPullRequests(fake, forge.GitHub, "acme/app", "task"), caller: "w-b1", args: deliver,
			want: pullOut{Seq: 1, State: "done"}},
		{name: "per task: one when the last item is delivered from that builder's branch",
			setup: func(t *testing.T, f fixture) {
				withPullRequests(fake, forge.GitHub, "acme/app", "task")(t, f)
				report(t, f, "w-b1", 1, "delivered", "users table")
				report(t, f, "w-b2", 2, "delivered", "login page")
				report(t, f, "w-b1", 3, "delivered", "sessions")
			},
			caller: "w-b1", args: map[string]any{"task": "t-login", "item": 4, "outcome": "delivered", "summary": "wired"},
			want: pullOut{Seq: 4, State: "done", PullRequest: &domain.ItemPullRequest{Forge: "github", Project: "acme/app", Number: 7,
				URL: "https://github.com/acme/app/pull/7", Head: "helix/w-b1"}},
			check: func(t *testing.T, f fixture, _ pullOut) {
				view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"})
				if view.Task.State != domain.TaskImplementationReview {
					t.Errorf("task state %s, want implementation_review", view.Task.State)
				}
				for _, it := range view.Items[:3] {
					if it.PullRequest != nil {
						t.Errorf("item %d has pull request %+v; the task opens one, on its last item", it.Seq, it.PullRequest)
					}
				}
			}},
		{name: "per item: the builder's second item shares its branch's open pull request",
			setup: func(t *testing.T, f fixture) {
				withPullRequests(fake, forge.GitHub, "acme/app", "item")(t, f)
				report(t, f, "w-b1", 1, "delivered", "users table")
			},
			caller: "w-b1", args: map[string]any{"task": "t-login", "item": 3, "outcome": "delivered", "summary": "sessions"},
			want: pullOut{Seq: 3, State: "done", PullRequest: &domain.ItemPullRequest{Forge: "github", Project: "acme/app", Number: 7,
				URL: "https://github.com/acme/app/pull/7", Head: "helix/w-b1"}},
			check: func(t *testing.T, f fixture, _ pullOut) {
				fake.mu.Lock()
				defer fake.mu.Unlock()
				for _, req := range fake.got {
					if strings.Contains(req, `"title":"Login: Session handler"`) {
						t.Errorf("a second pull request was asked for the same branch: %s", req)
					}
				}
			}},
		{name: "no repository attached to the builder: refused before anything is reported",
			setup: func(t *testing.T, f fixture) {
				withPullRequests(fake, forge.GitHub, "acme/app", "item")(t, f)
				mustCall[any](t, f.env, "detach_repository", map[string]any{"worker": "w-b1"})
			},
			caller: "w-b1", args: deliver, wantErr: []string{"t-login", `pullRequests "item"`, "no repository attached", "nothing was reported"},
			check: func(t *testing.T, f fixture, _ pullOut) {
				if it := items(t, f, "t-login")[0]; it.State != "in_progress" {
					t.Errorf("item 1 is %s, want still in_progress", it.State)
				}
			}},
		{name: "none: the builder opens its own if it wants",
			setup: withPullRequests(fake, forge.GitHub, "acme/app", "none"), caller: "w-b1", args: deliver,
			want: pullOut{Seq: 1, State: "done"}},
		{name: "blocked: nothing to review",
			setup: withPullRequests(fake, forge.GitHub, "acme/app", "item"), caller: "w-b1",
			args: map[string]any{"task": "t-login", "item": 1, "outcome": "blocked", "summary": "no driver"},
			want: pullOut{Seq: 1, State: "blocked"}},
	})
}

func TestSpecTaskPullRequestMode(t *testing.T) {
	runTable(t, "create_spec_task", []toolCase[taskOut]{
		{name: "unknown mode names the field and the valid ones", setup: withBuilders, args: func() map[string]any {
			a := taskArgs("")
			a["pullRequests"] = "always"
			return a
		}(), wantErr: []string{"pullRequests", `"always"`, `"item"`, `"task"`, `"none"`}},
	})
}

// TestSpecTaskReviewWakesBuilder: GitHub's review comment on the pull
// request an item opened lands on the task's stream and in its builder's
// inbox; the same comment on another pull request does not.
func TestSpecTaskReviewWakesBuilder(t *testing.T) {
	fake := newFakeForge(t)
	raw, err := os.ReadFile("../transports/github/testdata/pull_request_review_comment.json")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "gh-webhook-secret"
	for _, tc := range []struct {
		name   string
		number int
		woken  bool
	}{
		{"on the item's pull request", 7, true},
		{"on another pull request", 8, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			// Codertocat/Hello-World is the repository the payload is from.
			withPullRequests(fake, forge.GitHub, "Codertocat/Hello-World", "item")(t, f)
			mustCall[any](t, f.as("w-b1"), "report_item", map[string]any{"task": "t-login", "item": 1, "outcome": "delivered", "summary": "users table"})
			must(t)(struct{}{}, f.env.Store.SetSetting(t.Context(), github.ConfigSetting, `{"webhook_secret":"`+secret+`"}`))
			srv := httptest.NewServer(inbound.Mux(f.env.Store, inbound.NewBudget(4<<20), slog.New(slog.DiscardHandler), github.Endpoint(f.env.Store)))
			t.Cleanup(srv.Close)

			var payload map[string]any
			json.Unmarshal(raw, &payload)
			payload["pull_request"].(map[string]any)["number"] = tc.number
			body, _ := json.Marshal(payload)
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(body)
			req, _ := http.NewRequest("POST", srv.URL+"/github/webhook", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "pull_request_review_comment")
			req.Header.Set("X-GitHub-Delivery", "d-1")
			req.Header.Set(github.SignatureHeader, "sha256="+hex.EncodeToString(mac.Sum(nil)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			onTask, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.TaskStream("t-login")))
			var review *domain.Event
			for i, ev := range onTask {
				if ev.Message.Body == "Maybe you should use more emoji on this line." {
					review = &onTask[i]
				}
			}
			if (review != nil) != tc.woken {
				t.Fatalf("review on the task's stream: %v, want %v (status %d)", review != nil, tc.woken, resp.StatusCode)
			}
			inbox, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.InboxStream("w-b1")))
			last := inbox[len(inbox)-1].Message
			told := strings.Contains(last.Body, "Maybe you should use more emoji on this line.")
			if told != tc.woken {
				t.Fatalf("w-b1's last notice %q: %q; told of the review: %v, want %v", last.Subject, last.Body, told, tc.woken)
			}
			if tc.woken && (!strings.Contains(last.Subject, "item 1") || !strings.Contains(last.Body, "Codertocat") ||
				!strings.Contains(last.Body, "https://github.com/Codertocat/Hello-World/pull/7")) {
				t.Errorf("notice %q: %q, want item 1, the reviewer and the pull request named", last.Subject, last.Body)
			}
			// The reviewer's words are the outside's: a run reading them is
			// untrusted, on the task's stream and in the inbox alike.
			if tc.woken && (!review.Label.Untrusted || !inbox[len(inbox)-1].Label.Untrusted) {
				t.Errorf("labels: on the task's stream %v, the notice %v; want both untrusted", review.Label, inbox[len(inbox)-1].Label)
			}
		})
	}
}
