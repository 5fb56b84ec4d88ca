package kubernetes

import (
	"context"
	"fmt"
	"io"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// Client is the little of the Kubernetes API the runtime uses: Jobs,
// Secrets and Pods of one namespace at a time. It is a REST client over a
// scheme of only those types, not client-go's clientset, whose scheme
// links and registers every API group at start-up (twice the binary, a
// slower cold start) for the three kinds used here.
type Client struct {
	core  *rest.RESTClient // /api/v1
	batch *rest.RESTClient // /apis/batch/v1
}

// codecs decodes the few kinds the runtime reads; built on the first
// client, so a server that never runs on a cluster never pays for it.
var codecs = sync.OnceValue(func() serializer.CodecFactory {
	s := runtime.NewScheme()
	s.AddKnownTypes(corev1.SchemeGroupVersion, &corev1.Secret{}, &corev1.Pod{}, &corev1.PodList{})
	s.AddKnownTypes(batchv1.SchemeGroupVersion, &batchv1.Job{}, &batchv1.JobList{})
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)
	metav1.AddToGroupVersion(s, batchv1.SchemeGroupVersion)
	return serializer.NewCodecFactory(s)
})

// NewClient is a client of the cluster cfg names.
func NewClient(cfg *rest.Config) (*Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		// One budget of requests for both groups, as the cluster sees one client.
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	group := func(apiPath string, gv schema.GroupVersion) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.APIPath, c.GroupVersion = apiPath, &gv
		c.NegotiatedSerializer = codecs().WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientForConfigAndClient(c, hc)
	}
	core, err := group("/api", corev1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	batch, err := group("/apis", batchv1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &Client{core: core, batch: batch}, nil
}

func (c *Client) getJob(ctx context.Context, ns, name string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := c.batch.Get().Namespace(ns).Resource("jobs").Name(name).Do(ctx).Into(job)
	return job, err
}

func (c *Client) createJob(ctx context.Context, ns string, job *batchv1.Job) (*batchv1.Job, error) {
	out := &batchv1.Job{}
	err := c.batch.Post().Namespace(ns).Resource("jobs").Body(job).Do(ctx).Into(out)
	return out, err
}

func (c *Client) watchJob(ctx context.Context, ns, name, resourceVersion string) (watch.Interface, error) {
	opts := metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: resourceVersion, Watch: true}
	return c.batch.Get().Namespace(ns).Resource("jobs").VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
}

func (c *Client) deleteJob(ctx context.Context, ns, name string) error {
	bg := metav1.DeletePropagationBackground
	return c.batch.Delete().Namespace(ns).Resource("jobs").Name(name).Body(&metav1.DeleteOptions{PropagationPolicy: &bg}).Do(ctx).Error()
}

func (c *Client) createSecret(ctx context.Context, ns string, s *corev1.Secret) error {
	return c.core.Post().Namespace(ns).Resource("secrets").Body(s).Do(ctx).Error()
}

func (c *Client) mergePatchSecret(ctx context.Context, ns, name string, patch []byte) error {
	return c.core.Patch(types.MergePatchType).Namespace(ns).Resource("secrets").Name(name).Body(patch).Do(ctx).Error()
}

func (c *Client) deleteSecret(ctx context.Context, ns, name string) error {
	return c.core.Delete().Namespace(ns).Resource("secrets").Name(name).Body(&metav1.DeleteOptions{}).Do(ctx).Error()
}

func (c *Client) listPods(ctx context.Context, ns, labelSelector string) (*corev1.PodList, error) {
	list := &corev1.PodList{}
	opts := metav1.ListOptions{LabelSelector: labelSelector}
	err := c.core.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list)
	return list, err
}

func (c *Client) watchPods(ctx context.Context, ns, labelSelector, resourceVersion string) (watch.Interface, error) {
	opts := metav1.ListOptions{LabelSelector: labelSelector, ResourceVersion: resourceVersion, Watch: true}
	return c.core.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
}

// podLog follows one container's log: GET .../pods/<name>/log?follow=true.
func (c *Client) podLog(ctx context.Context, ns, pod, container string) (io.ReadCloser, error) {
	return c.core.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("follow", "true").Stream(ctx)
}

// Clients keeps one client per kubeconfig path, so that reading the
// settings per run (a `config set` applies to the next run) does not
// open new connections to the cluster for each.
type Clients struct {
	mu   sync.Mutex
	byKC map[string]*Client
}

// For is the client of the cluster a kubeconfig file names, or of the
// cluster the server runs in when path is empty.
func (c *Clients) For(path string) (*Client, error) {
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
	cl, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	if c.byKC == nil {
		c.byKC = map[string]*Client{}
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
