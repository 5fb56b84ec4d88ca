package kubernetes_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoKubernetesLibrary keeps client-go and the API machinery
// out of the server binary: their start-up (type registries, schemes)
// made every cold start a fifth slower, runtime in use or not, for the
// nine requests client.go makes itself. The tests may use them.
func TestBinaryLinksNoKubernetesLibrary(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/helixml/helix-org/cmd/helix-org").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") {
			t.Errorf("helix-org links %s: the kubernetes runtime speaks to the apiserver itself (client.go)", pkg)
		}
	}
}
