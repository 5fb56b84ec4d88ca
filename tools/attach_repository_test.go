package tools

import (
	"path/filepath"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

// withRepoRoots lets repositories under root be attached, cloning into a
// directory of the test's.
func withRepoRoots(root string) func(t *testing.T, f fixture) {
	return func(t *testing.T, f fixture) {
		for spec, v := range map[*domain.SettingSpec]string{&SpecRepoRootsSetting: root, &SpecClonesDirSetting: t.TempDir()} {
			if err := f.env.Store.SetSetting(t.Context(), *spec, v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestAttachRepository(t *testing.T) {
	root := t.TempDir()
	src := gittest.Repo(t, filepath.Join(root, "app"))
	gittest.Git(t, src, "branch", "-q", "develop")
	url := "file://" + src
	ignoreSource := func(t *testing.T, f fixture, got domain.Workspace) {
		ws, err := f.env.Store.Workspace(t.Context(), "w-echo")
		if err != nil || ws.URL != url || ws.Source == "" || ws.Dir != "" {
			t.Errorf("stored workspace = %+v, %v; want %s attached, from a clone, for the next run to check out", ws, err, url)
		}
		if c := lastOrgChange(t, f.env.Store); c.Action != "attach_repository" || c.Target != "w-echo" {
			t.Errorf("audit = %+v", c)
		}
	}
	runTable(t, "attach_repository", []toolCase[domain.Workspace]{
		{name: "the default branch by default", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo", "url": url},
			want: domain.Workspace{WorkerID: "w-echo", URL: url, Base: "main", Branch: "helix/w-echo"}, check: ignoreSource},
		{name: "a branch to start from", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo", "url": url, "branch": "develop"},
			want: domain.Workspace{WorkerID: "w-echo", URL: url, Base: "develop", Branch: "helix/w-echo"}},
		{name: "a branch the repository lacks", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo", "url": url, "branch": "nope"},
			wantErr: []string{"branch", `no branch "nope"`}, wantIs: domain.ErrInvalid},
		{name: "no url", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo"}, wantErr: []string{"url"}},
		{name: "local repositories not allowed", args: map[string]any{"worker": "w-echo", "url": url}, wantErr: []string{"spec_tasks.repo_roots"}},
		{name: "ssh", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo", "url": "git@github.com:o/r.git"}, wantErr: []string{"ssh repositories are not supported"}},
		{name: "private address", setup: withRepoRoots(root), args: map[string]any{"worker": "w-echo", "url": "http://10.0.0.1/r.git"}, wantErr: []string{"spec_tasks.allow_private"}},
		{name: "a human worker", setup: withRepoRoots(root), args: map[string]any{"worker": "w-maya", "url": url}, wantErr: []string{"worker", "only an AI worker has a workspace"}},
		{name: "a worker not below the caller", setup: withRepoRoots(root), caller: "w-maya", args: map[string]any{"worker": "w-echo", "url": url}, wantIs: domain.ErrForbidden},
	})
}
