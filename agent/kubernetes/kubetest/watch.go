package kubetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The simulated kubelet must see every pod of its namespace, as an
// informer would show them to its add handler: it lists them, then
// watches from the list's resourceVersion, so none created in between
// is missed.

// listPods passes on each pod of ns and returns the list's
// resourceVersion, to watch from.
func (c *Client) listPods(ctx context.Context, ns string, on func(*corev1.Pod)) (string, error) {
	list := &corev1.PodList{}
	if err := c.get(ctx, path(coreV1, ns, "pods"), nil, list); err != nil {
		return "", err
	}
	for i := range list.Items {
		on(&list.Items[i])
	}
	return list.ResourceVersion, nil
}

// followPods passes on each pod the watch of ns shows, added or
// changed, from resourceVersion rv until ctx ends. A watch the apiserver
// ends resumes from the last version it showed; one it can no longer
// resume (410: the version is compacted away) lists the pods again and
// goes on from there; any other failure is retried after a pause.
func (c *Client) followPods(ctx context.Context, ns, rv string, on func(*corev1.Pod)) {
	for ctx.Err() == nil {
		var err error
		rv, err = c.watchPods(ctx, ns, rv, on)
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			var listed string
			if listed, err = c.listPods(ctx, ns, on); err == nil {
				rv = listed
			}
		}
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// watchPods is one watch of ns's pods from rv, until the apiserver ends
// it (nil), ctx ends or the watch fails (an ERROR event is its Status);
// it returns the last resourceVersion it showed, to resume from.
func (c *Client) watchPods(ctx context.Context, ns, rv string, on func(*corev1.Pod)) (string, error) {
	q := url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"}}
	resp, err := c.send(ctx, http.MethodGet, path(coreV1, ns, "pods"), q, nil)
	if err != nil {
		return rv, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); errors.Is(err, io.EOF) {
			return rv, nil
		} else if err != nil {
			return rv, fmt.Errorf("watch the pods of %s: %w", ns, err)
		}
		if ev.Type == watch.Error {
			var s metav1.Status
			if err := json.Unmarshal(ev.Object, &s); err != nil {
				return rv, fmt.Errorf("watch the pods of %s: an ERROR event: %w", ns, err)
			}
			return rv, fmt.Errorf("watch the pods of %s: %w", ns, &apierrors.StatusError{ErrStatus: s})
		}
		pod := &corev1.Pod{}
		if err := json.Unmarshal(ev.Object, pod); err != nil {
			return rv, fmt.Errorf("watch the pods of %s: a %s event: %w", ns, ev.Type, err)
		}
		rv = pod.ResourceVersion // a BOOKMARK's object carries only this
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			on(pod)
		}
	}
}
