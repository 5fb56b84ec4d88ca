package kubetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeName is the simulated kubelet's node: Simulate binds every pod to it.
const NodeName = "kubetest-node"

// node is the simulated kubelet's HTTPS endpoint. The apiserver proxies
// a pod's log (pods/log) to the kubelet of the pod's node, at the node's
// InternalIP and daemonEndpoints port; this serves /containerLogs from
// the lines each pod's Life scripts.
type node struct {
	srv  *httptest.Server
	mu   sync.Mutex
	logs map[string]*podLog // by namespace/pod
}

// podLog is one pod's scripted output; ended closes when its container
// exits, which ends a following reader's stream as the kubelet does.
type podLog struct {
	lines []string
	ended chan struct{}
	once  sync.Once
}

func (l *podLog) end() { l.once.Do(func() { close(l.ended) }) }

// startNode serves the kubelet's endpoint and registers its Node. The
// apiserver verifies no kubelet certificate (no
// --kubelet-certificate-authority), so httptest's own serves.
func (c *Cluster) startNode(ctx context.Context) error {
	n := &node{logs: map[string]*podLog{}}
	n.srv = httptest.NewTLSServer(http.HandlerFunc(n.containerLogs))
	c.node = n
	u, err := url.Parse(n.srv.URL)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return err
	}
	created := &corev1.Node{}
	if err := c.Client.create(ctx, path(coreV1, "", "nodes"),
		&corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: NodeName}}, created); err != nil {
		return fmt.Errorf("create node %s: %w", NodeName, err)
	}
	created.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
		Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	if err := c.Client.update(ctx, path(coreV1, "", "nodes", NodeName, "status"), created, nil); err != nil {
		return fmt.Errorf("node %s status: %w", NodeName, err)
	}
	return nil
}

func (n *node) stop() {
	n.srv.CloseClientConnections()
	n.srv.Close()
}

// add scripts a pod's log before the pod runs: the log exists from then on.
func (n *node) add(ns, pod string, lines []string) *podLog {
	l := &podLog{lines: lines, ended: make(chan struct{})}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs[ns+"/"+pod] = l
	return l
}

// forget drops a namespace's logs when its simulation ends.
func (n *node) forget(ns string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := range n.logs {
		if strings.HasPrefix(k, ns+"/") {
			delete(n.logs, k)
		}
	}
}

// containerLogs answers GET /containerLogs/<ns>/<pod>/<container>: the
// pod's lines, then, with follow=true, holds the stream open until the
// container exits (or the reader goes).
func (n *node) containerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/containerLogs/") || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	n.mu.Lock()
	l := n.logs[parts[0]+"/"+parts[1]]
	n.mu.Unlock()
	if l == nil {
		http.Error(w, fmt.Sprintf("pod %s/%s is not on node %s", parts[0], parts[1], NodeName), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	for _, line := range l.lines {
		fmt.Fprintln(w, line)
	}
	w.(http.Flusher).Flush()
	if r.URL.Query().Get("follow") == "true" {
		select {
		case <-l.ended:
		case <-r.Context().Done():
		}
	}
}
