package kubernetes_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/kubernetes"
)

// TestKubeconfigRefusals: a kubeconfig the client cannot use is refused
// when a run first needs the cluster, naming the setting, the file and
// what is wrong with it. Its happy paths — a client certificate from files
// relative to the kubeconfig — are every runtime test's (kubetest).
func TestKubeconfigRefusals(t *testing.T) {
	pem := base64.StdEncoding.EncodeToString([]byte("not a certificate"))
	const ctx = "contexts: [{name: c, context: {cluster: k, user: u}}]\ncurrent-context: c\n"
	tests := []struct {
		name, kubeconfig, want string
	}{
		{"no file", "", "no such file or directory"},
		{"not YAML", "clusters: [", "not a kubeconfig"},
		{"no current context", "clusters: []\n", "it names no current-context"},
		{"unknown context", "current-context: x\n", `its current-context "x" is not among its contexts`},
		{"unknown cluster", ctx, `its context "c" names cluster "k", which it does not hold`},
		{"exec plugin", "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
			"users: [{name: u, user: {exec: {command: aws, args: [eks, get-token]}}}]\n" + ctx,
			`user "u" authenticates through an exec plugin or auth provider, which helix-org does not run`},
		{"bad CA data", "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: '%%%'}}]\n" + ctx,
			"certificate-authority-data: illegal base64"},
		{"CA not PEM", "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: '" + pem + "'}}]\n" + ctx,
			"the cluster's certificate authority holds no PEM certificate"},
		{"missing key file", "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
			"users: [{name: u, user: {client-certificate: c.crt, client-key: c.key}}]\n" + ctx, "client-certificate: open "},
		{"not a URL", "clusters: [{name: k, cluster: {server: '127.0.0.1:6443'}}]\n" + ctx, `the cluster's server "127.0.0.1:6443" is not an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			if tt.kubeconfig != "" {
				if err := os.WriteFile(path, []byte(tt.kubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := new(kubernetes.Clients).For(path)
			if err == nil || !strings.HasPrefix(err.Error(), "kubernetes.kubeconfig "+path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("For(%s) = %v, want kubernetes.kubeconfig %s: …%s…", tt.name, err, path, tt.want)
			}
		})
	}
}

// TestNoClusterWithoutKubeconfig: outside a pod, an empty
// kubernetes.kubeconfig says what to set.
func TestNoClusterWithoutKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := new(kubernetes.Clients).For("")
	if err == nil || !strings.Contains(err.Error(), "kubernetes.kubeconfig is empty and the server is not in a cluster") {
		t.Fatalf("For(\"\") = %v", err)
	}
}
