package kubetest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Life is what a simulated pod does: it runs until Exit is called (or,
// with Hold false, at once), then terminates with that code.
type Life struct {
	// Hold keeps the pod running until its Release channel is closed.
	Hold    bool
	Release <-chan struct{}
	Exit    int32
	// Log is what the container prints, one line each, served through
	// the apiserver's pods/log from when the pod runs until it exits.
	Log []string
}

// Simulate plays the kubelet for the pods of ns until the test ends:
// each new pod is bound to NodeName and marked running, then lives as
// life says — its log readable the real way, through the apiserver, and
// a Job's controller sees it succeed or fail by its exit code.
func (c *Cluster) Simulate(t testing.TB, ns string, life func(*corev1.Pod) Life) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait(); c.node.forget(ns) })
	// One goroutine at a time calls add: this one's list, then the watch's.
	seen := map[string]bool{}
	add := func(pod *corev1.Pod) {
		if seen[pod.Name] || pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
			return
		}
		seen[pod.Name] = true
		wg.Go(func() { c.live(ctx, pod, life(pod)) })
	}
	rv, err := c.Client.listPods(ctx, ns, add)
	if err != nil {
		t.Fatalf("simulate the kubelet of %s: %v", ns, err)
	}
	wg.Go(func() { c.Client.followPods(ctx, ns, rv, add) })
}

// live runs one pod: bound to the node, running, then terminated with
// the life's code.
func (c *Cluster) live(ctx context.Context, pod *corev1.Pod, l Life) {
	log := c.node.add(pod.Namespace, pod.Name, l.Log)
	defer log.end() // the container is gone, whatever ended its life
	if !c.bind(ctx, pod) {
		return
	}
	now := metav1.Now()
	running := []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: true, Started: ptr(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	if !c.setStatus(ctx, pod, corev1.PodRunning, running) {
		return
	}
	if l.Hold {
		select {
		case <-l.Release:
		case <-ctx.Done():
			return
		}
	}
	phase := corev1.PodSucceeded
	if l.Exit != 0 {
		phase = corev1.PodFailed
	}
	reason := "Completed"
	if l.Exit != 0 {
		reason = "Error"
	}
	log.end() // the container exits before the kubelet reports it
	done := []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: l.Exit, Reason: reason, StartedAt: now, FinishedAt: metav1.Now()}}}}
	c.setStatus(ctx, pod, phase, done)
}

// bind assigns the pod to the node, as the scheduler would (there is
// none); false when the pod is gone.
func (c *Cluster) bind(ctx context.Context, pod *corev1.Pod) bool {
	b := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"}, ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		Target: corev1.ObjectReference{Kind: "Node", Name: NodeName}}
	for ctx.Err() == nil {
		err := c.Client.create(ctx, path(coreV1, pod.Namespace, "pods", pod.Name, "binding"), b, nil)
		switch {
		case err == nil, apierrors.IsConflict(err): // conflict: bound already
			return true
		case apierrors.IsNotFound(err):
			return false
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

// setStatus writes a pod's phase and container statuses, as the kubelet
// does, retrying on conflicts; false when the pod is gone.
func (c *Cluster) setStatus(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase, cs []corev1.ContainerStatus) bool {
	for ctx.Err() == nil {
		cur := &corev1.Pod{}
		err := c.Client.get(ctx, path(coreV1, pod.Namespace, "pods", pod.Name), nil, cur)
		if apierrors.IsNotFound(err) {
			return false
		}
		if err == nil {
			cur.Status.Phase, cur.Status.ContainerStatuses = phase, cs
			ready := corev1.ConditionFalse
			if phase == corev1.PodRunning {
				ready = corev1.ConditionTrue
			}
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
			if cur.Status.StartTime == nil {
				cur.Status.StartTime = ptr(metav1.Now())
			}
			if err = c.Client.update(ctx, path(coreV1, pod.Namespace, "pods", pod.Name, "status"), cur, nil); err == nil {
				return true
			}
			if apierrors.IsNotFound(err) {
				return false
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
