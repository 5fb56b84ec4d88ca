package tools

import (
	"path/filepath"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

func TestListRepositories(t *testing.T) {
	root := t.TempDir()
	url := "file://" + gittest.Repo(t, filepath.Join(root, "app"))
	attached := func(t *testing.T, f fixture) {
		withRepoRoots(root)(t, f)
		if _, err := call[domain.Workspace](t, f.env, "attach_repository", map[string]any{"worker": "w-echo", "url": url}); err != nil {
			t.Fatal(err)
		}
	}
	runTable(t, "list_repositories", []toolCase[listRepositoriesOut]{
		{name: "every workspace", setup: attached, args: map[string]any{},
			want: listRepositoriesOut{Workspaces: []domain.Workspace{{WorkerID: "w-echo", URL: url, Base: "main", Branch: "helix/w-echo"}}}},
		{name: "one not yet made", args: map[string]any{"worker": "w-desk"},
			want: listRepositoriesOut{Workspaces: []domain.Workspace{{WorkerID: "w-desk", Branch: "helix/w-desk"}}}},
	})
}
