package kubernetes

import (
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients keeps one client per kubeconfig path, so that reading the
// settings per run (a `config set` applies to the next run) does not
// open new connections to the cluster for each.
type Clients struct {
	mu   sync.Mutex
	byKC map[string]kubernetes.Interface
}

// For is the client of the cluster a kubeconfig file names, or of the
// cluster the server runs in when path is empty.
func (c *Clients) For(path string) (kubernetes.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.byKC[path]; ok {
		return cl, nil
	}
	cfg, err := restConfig(path)
	if err != nil {
		return nil, err
	}
	// The default (5 per second) would hold back a burst of activations.
	cfg.QPS, cfg.Burst = 50, 100
	cl, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if c.byKC == nil {
		c.byKC = map[string]kubernetes.Interface{}
	}
	c.byKC[path] = cl
	return cl, nil
}

func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("%s is empty and the server is not in a cluster (%v): set it to a kubeconfig file", KubeconfigSetting.Key, err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", KubeconfigSetting.Key, path, err)
	}
	return cfg, nil
}
