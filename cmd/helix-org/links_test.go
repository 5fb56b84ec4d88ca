package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoHeavyLibrary keeps libraries out of the server binary
// whose package initialisation cost every cold start, in use or not, for
// what the server now does itself. Tests may still use them.
func TestBinaryLinksNoHeavyLibrary(t *testing.T) {
	banned := []struct{ prefix, instead string }{
		{"k8s.io/", "the kubernetes runtime speaks to the apiserver itself (agent/kubernetes/client.go)"},
		{"sigs.k8s.io/", "the kubernetes runtime speaks to the apiserver itself (agent/kubernetes/client.go)"},
		{"github.com/docker/docker/client", "the docker runtime speaks to the Engine API itself (agent/docker/engineapi)"},
		{"github.com/distribution/reference", "it came with the docker client (agent/docker/engineapi)"},
		{"go.opentelemetry.io/", "it came with the docker client (agent/docker/engineapi)"},
		{"github.com/containerd/errdefs", "it came with the docker client (agent/docker/engineapi)"},
		{"github.com/docker/go-connections/sockets", "it came with the docker client (agent/docker/engineapi)"},
		{"github.com/pkg/errors", "it came with the docker client (agent/docker/engineapi)"},
		{"github.com/prometheus/client_golang", "/metrics is written by hand (server/metrics/expose.go)"},
		{"github.com/BurntSushi/toml", "Codex's config.toml is written by hand (agent/codex.go)"},
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/helixml/helix-org/cmd/helix-org").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.HasPrefix(pkg, b.prefix) {
				t.Errorf("helix-org links %s: %s", pkg, b.instead)
			}
		}
	}
}
