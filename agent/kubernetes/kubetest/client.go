package kubetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Client is what the tests and the simulated kubelet ask of the
// apiserver, as the cluster's admin: a few requests on Jobs, Secrets,
// pods, Nodes and namespaces, and a watch of pods, over net/http and
// decoded into k8s.io/api's types. Not client-go: its 400 packages
// nearly doubled every cold build of the tests. A refusal is the
// apiserver's Status as an *apierrors.StatusError, so apierrors.IsNotFound
// and its kin read it.
type Client struct {
	server string
	hc     *http.Client
}

// newClient authenticates with the admin's client certificate and
// trusts only the cluster's CA.
func newClient(server string, caPEM []byte, p pki) (*Client, error) {
	cert, err := tls.LoadX509KeyPair(p.admin, p.adminKey)
	if err != nil {
		return nil, fmt.Errorf("the admin's client certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the cluster's CA holds no PEM certificate")
	}
	tr := &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, Certificates: []tls.Certificate{cert}}}
	return &Client{server: server, hc: &http.Client{Transport: tr}}, nil
}

// Paths of the two API groups the tests use.
const (
	coreV1  = "/api/v1"
	batchV1 = "/apis/batch/v1"
)

// path is a resource's URL path; ns is empty for one not namespaced
// (Nodes, namespaces), rest its name and a subresource.
func path(group, ns, resource string, rest ...string) string {
	p := group
	if ns != "" {
		p += "/namespaces/" + url.PathEscape(ns)
	}
	p += "/" + resource
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

// Job is Job name of ns.
func (c *Client) Job(ctx context.Context, ns, name string) (*batchv1.Job, error) {
	out := &batchv1.Job{}
	return out, c.get(ctx, path(batchV1, ns, "jobs", name), nil, out)
}

// Jobs is every Job of ns.
func (c *Client) Jobs(ctx context.Context, ns string) (*batchv1.JobList, error) {
	out := &batchv1.JobList{}
	return out, c.get(ctx, path(batchV1, ns, "jobs"), nil, out)
}

// DeleteJob deletes Job name of ns and, after it, its pods, in the
// background, as the runtime does.
func (c *Client) DeleteJob(ctx context.Context, ns, name string) error {
	bg := metav1.DeletePropagationBackground
	return c.delete(ctx, path(batchV1, ns, "jobs", name), metav1.DeleteOptions{PropagationPolicy: &bg})
}

// Secret is Secret name of ns.
func (c *Client) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	out := &corev1.Secret{}
	return out, c.get(ctx, path(coreV1, ns, "secrets", name), nil, out)
}

// Secrets is the Secrets of ns that labelSelector selects (all, empty).
func (c *Client) Secrets(ctx context.Context, ns, labelSelector string) (*corev1.SecretList, error) {
	out := &corev1.SecretList{}
	return out, c.get(ctx, path(coreV1, ns, "secrets"), url.Values{"labelSelector": {labelSelector}}, out)
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out)
}

func (c *Client) create(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPost, path, nil, in, out)
}

func (c *Client) update(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPut, path, nil, in, out)
}

// delete sends opts as client-go does: always, as the request's body.
func (c *Client) delete(ctx context.Context, path string, opts metav1.DeleteOptions) error {
	opts.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}
	return c.do(ctx, http.MethodDelete, path, nil, &opts, nil)
}

// do sends in as JSON (nil: no body) and decodes the answer into out
// (nil: drops it).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: the answer does not decode: %w", method, path, err)
	}
	return nil
}

// send makes one request and returns the response to a 2xx; any other
// is the apiserver's refusal.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path+"?"+query.Encode(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %w", method, path, refusal(resp))
	}
	return resp, nil
}

// refusal is the Status the apiserver answered with or, when something
// else answered, one made from the code, as client-go makes it.
func refusal(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var s metav1.Status
	if json.Unmarshal(b, &s) == nil && s.Kind == "Status" {
		return &apierrors.StatusError{ErrStatus: s}
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, resp.Request.Method, schema.GroupResource{}, "", string(b), 0, true)
}
