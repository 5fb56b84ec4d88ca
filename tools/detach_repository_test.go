package tools

import (
	"path/filepath"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store/designdocs/gittest"
)

func TestDetachRepository(t *testing.T) {
	root := t.TempDir()
	url := "file://" + gittest.Repo(t, filepath.Join(root, "app"))
	attached := func(t *testing.T, f fixture) {
		withRepoRoots(root)(t, f)
		if _, err := call[domain.Workspace](t, f.env, "attach_repository", map[string]any{"worker": "w-echo", "url": url}); err != nil {
			t.Fatal(err)
		}
	}
	runTable(t, "detach_repository", []toolCase[domain.Workspace]{
		{name: "detached: a repository of its own again", setup: attached, args: map[string]any{"worker": "w-echo"},
			want: domain.Workspace{WorkerID: "w-echo", Branch: "helix/w-echo"}},
		{name: "nothing attached", args: map[string]any{"worker": "w-echo"}, wantErr: []string{"worker", "no repository attached"}},
		{name: "not below the caller", setup: attached, caller: "w-maya", args: map[string]any{"worker": "w-echo"}, wantIs: domain.ErrForbidden},
	})
}
