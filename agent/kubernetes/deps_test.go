package kubernetes_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksOnlyThreeKinds keeps client-go's clientset, informers
// and every API group but the runtime's out of the server binary: their
// scheme registers each group at start-up, which doubled the binary and
// slowed every cold start, runtime in use or not.
func TestBinaryLinksOnlyThreeKinds(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/helixml/helix-org/cmd/helix-org").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	// batch/v1 itself imports scheduling/v1alpha3 (a Job's workload reference).
	apiGroups := map[string]bool{"k8s.io/api/core/v1": true, "k8s.io/api/batch/v1": true, "k8s.io/api/scheduling/v1alpha3": true}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, "k8s.io/client-go/kubernetes"), strings.HasPrefix(pkg, "k8s.io/client-go/informers"),
			strings.HasPrefix(pkg, "k8s.io/client-go/dynamic"), strings.HasPrefix(pkg, "k8s.io/client-go/tools/cache"):
			t.Errorf("helix-org links %s: the runtime uses rest and clientcmd only", pkg)
		case strings.HasPrefix(pkg, "k8s.io/api/") && !apiGroups[pkg]:
			t.Errorf("helix-org links %s: only core/v1 and batch/v1 are the runtime's", pkg)
		}
	}
}
