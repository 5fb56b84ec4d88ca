package docker

import (
	"strings"
	"testing"
)

func TestCheckMount(t *testing.T) {
	tests := []struct {
		src       string
		forbidden []string
		want      string
	}{
		{"/srv/envs/w-a", []string{"/srv/helix-org.db"}, ""},
		{"/srv", []string{"/srv/helix-org.db"}, "it contains /srv/helix-org.db"},
		{"/srv/helix-org.db", []string{"/srv/helix-org.db"}, "it contains /srv/helix-org.db"},
		{"/var/run", nil, "it contains " + DockerSocket},
		{"/", nil, "it contains " + DockerSocket},
		{"/srv/envs/w-a/..x", []string{"/srv/envs/w-a/..y"}, ""},
		{"/srv/orgs/north.db", []string{"/srv/orgs"}, "it is inside /srv/orgs"},
		{"/srv/orgs-notes", []string{"/srv/orgs"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			err := checkMount(tc.src, tc.forbidden)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("checkMount(%s) = %v, want %q", tc.src, err, tc.want)
			}
		})
	}
}
