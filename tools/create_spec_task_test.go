package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

func TestCreateSpecTask(t *testing.T) {
	repo := gitRepo(t)
	plain := notAGitRepo(t)
	served := t.TempDir()
	origin := gittest.Bare(t, repo, filepath.Join(served, "app.git"))
	forge := gittest.Serve(t, served, false)
	clones := func(allowPrivate bool) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			withBuilders(t, f)
			for _, kv := range []struct {
				spec domain.SettingSpec
				v    string
			}{{SpecClonesDirSetting, t.TempDir()}, {SpecAllowPrivateSetting, fmt.Sprint(allowPrivate)}} {
				if err := f.env.Store.SetSetting(t.Context(), kv.spec, kv.v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Roots other than where the repositories are (or none at all).
	roots := func(v string) func(t *testing.T, f fixture) {
		return func(t *testing.T, f fixture) {
			withBuilders(t, f)
			if err := f.env.Store.SetSetting(t.Context(), SpecRepoRootsSetting, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	marker := filepath.Join(t.TempDir(), "marker")
	trapped := gittest.Trapped(t, filepath.Join(t.TempDir(), "trapped"), marker)
	cloned := func(url string) func(t *testing.T, f fixture, _ taskOut) {
		return func(t *testing.T, f fixture, _ taskOut) {
			view, err := f.env.Store.GetSpecTask(t.Context(), "t-login")
			if err != nil {
				t.Fatal(err)
			}
			dir, _ := f.env.Store.SettingOr(t.Context(), SpecClonesDirSetting)
			if view.Task.Origin != url || !strings.HasPrefix(view.Task.Repo, dir) {
				t.Errorf("repo %q origin %q; want a clone under %s of %s", view.Task.Repo, view.Task.Origin, dir, url)
			}
			if got := gitShow(t, view.Task.Repo, "t-login/requirements.md"); !strings.Contains(got, "Add login to the todo app.") {
				t.Errorf("requirements.md in the clone = %q", got)
			}
		}
	}
	with := func(edit func(map[string]any)) map[string]any {
		a := taskArgs("")
		edit(a)
		return a
	}
	runTable(t, "create_spec_task", []toolCase[taskOut]{
		{
			name:  "starts at once: the planner is asked for the spec",
			setup: withBuilders,
			args:  taskArgs(""),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if diff := cmp.Diff([]string{"Spec task t-login: write the spec"}, inboxSubjects(t, f, "w-echo")); diff != "" {
					t.Errorf("planner inbox (-want +got):\n%s", diff)
				}
				evs, _ := f.env.Store.ReadEvents(t.Context(), storeQuery(domain.TaskStream("t-login")))
				if len(evs) != 1 || evs[0].Message.Subject != "t-login: backlog → spec_generation" {
					t.Errorf("task stream = %+v", evs)
				}
				if c := lastOrgChange(t, f.env.Store); c.Action != "spec_task_start" || c.Target != "t-login" {
					t.Errorf("s-org change = %+v", c)
				}
			},
		},
		{
			name:  "with a repository the requirements are committed on helix-design-docs",
			setup: withBuilders,
			args:  taskArgs(repo),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: func(t *testing.T, f fixture, _ taskOut) {
				if got := gitShow(t, repo, "t-login/requirements.md"); !strings.Contains(got, "Add login to the todo app.") {
					t.Errorf("requirements.md = %q", got)
				}
			},
		},
		{
			name:  "a repository whose hooks and fsmonitor run code: the docs are committed, none of it runs",
			setup: withBuilders,
			args:  taskArgs(trapped),
			want:  taskOut{ID: "t-login", State: "exploration"}, // it has files: listing them runs none of its code either
			check: func(t *testing.T, f fixture, _ taskOut) {
				if got := gitShow(t, trapped, "t-login/requirements.md"); !strings.Contains(got, "Add login to the todo app.") {
					t.Errorf("requirements.md = %q", got)
				}
				if data, err := os.ReadFile(marker); err == nil {
					t.Errorf("the repository's code ran as the server: %q", data)
				}
			},
		},
		{name: "a path outside spec_tasks.repo_roots", setup: roots(plain), args: taskArgs(repo),
			wantErr: []string{"repo: ", "is not under spec_tasks.repo_roots (" + plain + ")"}, wantIs: domain.ErrInvalid},
		{name: "a file URL outside spec_tasks.repo_roots", setup: roots(plain), args: taskArgs("file://" + origin),
			wantErr: []string{"repo: ", "is not under spec_tasks.repo_roots"}, wantIs: domain.ErrInvalid},
		{name: "no spec_tasks.repo_roots: local paths are refused", setup: roots(""), args: taskArgs(repo),
			wantErr: []string{"repo: ", "local repositories are refused until an operator lists where they may be in the setting spec_tasks.repo_roots"}, wantIs: domain.ErrInvalid},
		{name: "no spec_tasks.repo_roots: file URLs are refused", setup: roots(""), args: taskArgs("file://" + origin),
			wantErr: []string{"repo: ", "local repositories are refused until an operator lists"}, wantIs: domain.ErrInvalid},
		{
			name:  "a file URL is cloned, and the design docs are pushed back to it",
			setup: clones(false),
			args:  taskArgs("file://" + origin),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: func(t *testing.T, f fixture, got taskOut) {
				cloned("file://"+origin)(t, f, got)
				if got := gitShow(t, origin, "t-login/requirements.md"); !strings.Contains(got, "Add login to the todo app.") {
					t.Errorf("requirements.md at the origin = %q", got)
				}
			},
		},
		{
			name:  "a loopback http URL is cloned when the setting allows it; a refused push keeps the docs local",
			setup: clones(true),
			args:  taskArgs(forge.URL + "/app.git"),
			want:  taskOut{ID: "t-login", State: "spec_generation"},
			check: cloned(forge.URL + "/app.git"),
		},
		{name: "a loopback URL without the setting", setup: clones(false), args: taskArgs(forge.URL + "/app.git"),
			wantErr: []string{"repo: ", "127.0.0.1 is a loopback, private", "spec_tasks.allow_private"}, wantIs: domain.ErrInvalid},
		{name: "a private address", setup: clones(false), args: taskArgs("https://192.168.1.10/app.git"),
			wantErr: []string{"repo: ", "192.168.1.10 is a loopback, private"}, wantIs: domain.ErrInvalid},
		{name: "a URL with no repository", setup: clones(true), args: taskArgs(forge.URL + "/nope.git"),
			wantErr: []string{"repo: ", "/nope.git cannot be cloned: "}, wantIs: domain.ErrInvalid},
		{name: "a file URL of a directory that is not a repository", setup: clones(true), args: taskArgs("file://" + plain),
			wantErr: []string{"repo: ", "cannot be cloned: ", "does not appear to be a git repository"}, wantIs: domain.ErrInvalid},
		{name: "an ssh URL", setup: clones(true), args: taskArgs("git@github.com:org/app.git"),
			wantErr: []string{"repo: ", "ssh repositories are not supported"}, wantIs: domain.ErrInvalid},
		{name: "repository missing", setup: withBuilders, args: taskArgs(filepath.Join(plain, "nope")),
			wantErr: []string{"repo: ", "does not exist"}, wantIs: domain.ErrInvalid},
		{name: "not a git repository", setup: withBuilders, args: taskArgs(plain),
			wantErr: []string{"repo: ", "is not a git repository"}, wantIs: domain.ErrInvalid},
		{name: "unknown builder", args: taskArgs(""), wantErr: []string{`"w-b1"`, "not found"}, wantIs: domain.ErrNotFound},
		{name: "reviewer must be a person", setup: withBuilders, args: with(func(a map[string]any) { a["reviewer"] = "w-b1" }),
			wantErr: []string{"reviewer: w-b1 is an AI worker"}, wantIs: domain.ErrInvalid},
		{name: "no builders", setup: withBuilders, args: with(func(a map[string]any) { a["builders"] = []string{} }),
			wantErr: []string{"builders: is required"}, wantIs: domain.ErrInvalid},
		{name: "bad id", setup: withBuilders, args: with(func(a map[string]any) { a["id"] = "login" }),
			wantErr: []string{`id: id "login" must start with "t-"`}, wantIs: domain.ErrInvalid},
		{name: "taken id", setup: withSpecTask, args: taskArgs(""), wantErr: []string{`spec task "t-login" already exists`}, wantIs: domain.ErrConflict},
		{name: "a worker may not put others' workers on a task", setup: func(t *testing.T, f fixture) { withBuilders(t, f); withLead(t, f) },
			caller: "w-lead", args: taskArgs(""), wantIs: domain.ErrForbidden},
	})
}
