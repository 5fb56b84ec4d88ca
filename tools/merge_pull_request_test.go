package tools

import (
	"strings"
	"testing"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
)

func TestMergePullRequest(t *testing.T) {
	fake := newFakeForge(t)
	onGitHub := func(t *testing.T, f fixture) {
		ctx := t.Context()
		for spec, v := range map[*domain.SettingSpec]string{&GitHubTokenSetting: forgeToken, &GitHubAPISetting: fake.URL, &safedial.AllowPrivateSetting: "true"} {
			if err := f.env.Store.SetSetting(ctx, *spec, v); err != nil {
				t.Fatal(err)
			}
		}
		must(t)(f.env.Store.AttachRepository(ctx, "w-owner", domain.Workspace{WorkerID: "w-echo", URL: "https://github.com/acme/app", Base: "main", Forge: "github", Project: "acme/app"}))
	}
	runTable(t, "merge_pull_request", []toolCase[mergePullRequestOut]{
		{name: "merged on the forge", setup: onGitHub, args: map[string]any{"worker": "w-echo", "number": 7},
			want: mergePullRequestOut{Merged: true, Project: "acme/app", Number: 7},
			check: func(t *testing.T, _ fixture, _ mergePullRequestOut) {
				fake.mu.Lock()
				defer fake.mu.Unlock()
				if last := fake.got[len(fake.got)-1]; !strings.HasPrefix(last, "PUT /repos/acme/app/pulls/7/merge Bearer "+forgeToken) {
					t.Errorf("the forge was sent %q", last)
				}
			}},
		{name: "no number", setup: onGitHub, args: map[string]any{"worker": "w-echo"}, wantErr: []string{"number"}},
		{name: "no repository attached", args: map[string]any{"number": 7}, wantErr: []string{"worker", "no repository on a forge"}},
		{name: "a worker not below the caller", setup: onGitHub, caller: "w-maya", args: map[string]any{"worker": "w-echo", "number": 7}, wantIs: domain.ErrForbidden},
	})
}
