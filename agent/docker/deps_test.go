package docker_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoDockerClient keeps the docker client library and what
// it drags in (OpenTelemetry, the reference grammar, errdefs) out of the
// server binary: their package initialisation cost every cold start,
// Docker in use or not, for requests engineapi makes itself. The wire
// types of github.com/docker/docker/api/types stay.
func TestBinaryLinksNoDockerClient(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/helixml/helix-org/cmd/helix-org").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{
		"github.com/docker/docker/client",
		"github.com/distribution/reference",
		"go.opentelemetry.io/",
		"github.com/containerd/errdefs",
		"github.com/docker/go-connections/sockets",
		"github.com/pkg/errors",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.HasPrefix(pkg, b) {
				t.Errorf("helix-org links %s: the docker runtime speaks to the Engine API itself (engineapi)", pkg)
			}
		}
	}
}
