// Package kubetest starts a real Kubernetes control plane for tests — etcd,
// kube-apiserver and kube-controller-manager (for the Job and garbage
// collector controllers), built from the Go module proxy by
// scripts/kube-test-bins.sh and cached — on loopback ports, and a kubelet
// of its own that plays the pods' lives (Simulate): no container
// runtime, only a Node whose kubelet endpoint serves the pods' scripted
// logs, pods bound to it and their status written through the apiserver.
// Tests reach the apiserver through Client, a few requests over net/http
// into k8s.io/api's types, not client-go, so that building them compiles
// no more than those types.
package kubetest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Version is the Kubernetes release the binaries are built from; it
// names their cache directory, as scripts/kube-test-bins.sh does.
const Version = "v1.37.2"

// AdminToken is the bearer token TokenKubeconfig authenticates with.
const AdminToken = "helix-org-test-admin-token"

// Cluster is a running control plane.
type Cluster struct {
	// Kubeconfig is a file naming the apiserver with the admin's
	// client certificate.
	Kubeconfig string
	// TokenKubeconfig names the same apiserver, its CA inline, and the
	// admin by a bearer token.
	TokenKubeconfig string
	// Client speaks to the apiserver as the admin, by its certificate.
	Client *Client
	dir    string
	procs  []*exec.Cmd
	node   *node
	mu     sync.Mutex
	used   map[string]int // namespaces' names, by times asked for
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared is the test binary's cluster, started on first use (a few
// seconds) and stopped by Stop, which TestMain calls; each test takes a
// namespace of its own (Namespace).
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() { shared.c, shared.err = start() })
	if shared.err != nil {
		t.Fatalf("kubernetes test cluster: %v", shared.err)
	}
	return shared.c
}

// Stop ends the shared cluster, if one started.
func Stop() {
	if shared.c != nil {
		shared.c.stop()
	}
}

// Namespace creates a namespace for one test and waits for its default
// service account, without which no pod is admitted. Its name is name,
// or name-2, name-3… when a test runs again (go test -count): a deleted
// namespace stays, terminating, as no namespace controller runs to
// empty it.
func (c *Cluster) Namespace(t testing.TB, name string) string {
	t.Helper()
	ctx := t.Context()
	name = c.fresh(name)
	namespace := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Client.create(ctx, path(coreV1, "", "namespaces"), namespace, nil); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		c.Client.delete(context.Background(), path(coreV1, "", "namespaces", name), metav1.DeleteOptions{})
	})
	if err := waitFor(ctx, time.Minute, func() bool {
		return c.Client.get(ctx, path(coreV1, name, "serviceaccounts", "default"), nil, nil) == nil
	}); err != nil {
		t.Fatalf("namespace %s has no default service account: %v", name, err)
	}
	return name
}

func (c *Cluster) fresh(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used == nil {
		c.used = map[string]int{}
	}
	c.used[name]++
	if n := c.used[name]; n > 1 {
		return fmt.Sprintf("%s-%d", name, n)
	}
	return name
}

func start() (*Cluster, error) {
	bins, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "helix-org-kube-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	if err := c.boot(bins); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) boot(bins string) error {
	p, err := writePKI(c.dir)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if err := c.run(bins, "etcd", etcdURL, "http://127.0.0.1:"+strconv.Itoa(ports[1]), filepath.Join(c.dir, "etcd")); err != nil {
		return err
	}
	api := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	// The admin by token too, for TokenKubeconfig.
	tokens := filepath.Join(c.dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(AdminToken+`,admin-token,admin-token,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	err = c.run(bins, "kube-apiserver", "--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[2]), "--tls-cert-file="+p.serving, "--tls-private-key-file="+p.servingKey,
		"--client-ca-file="+p.ca, "--authorization-mode=RBAC", "--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+p.saPub,
		"--service-account-signing-key-file="+p.saKey, "--enable-priority-and-fairness=false", "--profiling=false",
		"--endpoint-reconciler-type=none", "--cert-dir="+filepath.Join(c.dir, "certs"), "--token-auth-file="+tokens)
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {client-certificate: %q, client-key: %q}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
`, api, p.ca, p.admin, p.adminKey)
	if err := os.WriteFile(c.Kubeconfig, []byte(kc), 0o600); err != nil {
		return err
	}
	caPEM, err := os.ReadFile(p.ca)
	if err != nil {
		return err
	}
	c.TokenKubeconfig = filepath.Join(c.dir, "token.kubeconfig")
	kc = fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
`, api, base64.StdEncoding.EncodeToString(caPEM), AdminToken)
	if err := os.WriteFile(c.TokenKubeconfig, []byte(kc), 0o600); err != nil {
		return err
	}
	if c.Client, err = newClient(api, caPEM, p); err != nil {
		return err
	}
	ctx := context.Background()
	if err := waitFor(ctx, 2*time.Minute, func() bool { return c.Client.get(ctx, "/readyz", nil, nil) == nil }); err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w\n%s", err, c.logTail("kube-apiserver"))
	}
	err = c.run(bins, "kube-controller-manager", "--kubeconfig="+c.Kubeconfig, "--controllers=job,garbagecollector,serviceaccount",
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[3]), "--use-service-account-credentials=false",
		"--concurrent-job-syncs=20", "--concurrent-gc-syncs=20", "--profiling=false")
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool {
		return c.Client.get(ctx, path(coreV1, "default", "serviceaccounts", "default"), nil, nil) == nil
	}); err != nil {
		return fmt.Errorf("kube-controller-manager made no default service account: %w\n%s", err, c.logTail("kube-controller-manager"))
	}
	return c.startNode(ctx)
}

// run starts one binary, its output in a log file of the cluster's
// directory. The child dies with the test binary, even killed.
func (c *Cluster) run(bins, name string, args ...string) error {
	logf, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bins, name), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	go func() { cmd.Wait(); logf.Close() }()
	return nil
}

func (c *Cluster) stop() {
	if c.node != nil {
		c.node.stop()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Process.Kill()
	}
	os.RemoveAll(c.dir)
}

func (c *Cluster) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
	return string(b[max(0, len(b)-3000):])
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitFor polls cond until it holds: what it waits on happens in
// another process.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out after " + d.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Binaries is the directory of the cached binaries, built first by
// scripts/kube-test-bins.sh when they are missing (minutes, once).
func Binaries() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.Command("sh", filepath.Join(root, "scripts", "kube-test-bins.sh")).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("scripts/kube-test-bins.sh: %w\n%s", err, ee.Stderr)
		}
		return "", fmt.Errorf("scripts/kube-test-bins.sh: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return "", errors.New("scripts/kube-test-bins.sh printed no directory")
	}
	return lines[len(lines)-1], nil
}

// repoRoot is the directory of go.mod, above the test's directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}
