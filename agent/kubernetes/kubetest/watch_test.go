package kubetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestFollowPodsMissesNone: the simulated kubelet is shown every pod of
// its namespace, against an apiserver scripted to do what a real one
// may, request by request: a list, then a watch from its version that
// the apiserver closes, resumed from the last version shown (a
// BOOKMARK's); a version too old, as an ERROR event and as a 410
// answer, each listed again; another failure, retried.
func TestFollowPodsMissesNone(t *testing.T) {
	pod := func(name, rv string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q},"status":{"phase":"Pending"}}`, name, rv)
	}
	list := func(rv string, pods ...string) string {
		return fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":%q},"items":[%s]}`, rv, strings.Join(pods, ","))
	}
	event := func(typ, object string) string { return fmt.Sprintf(`{"type":%q,"object":%s}`+"\n", typ, object) }
	status := func(code int, reason string) string {
		return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":"too old resource version"}`, code, reason)
	}
	watchFrom := func(rv string) string { return "allowWatchBookmarks=true&resourceVersion=" + rv + "&watch=true" }
	steps := []struct {
		query  string
		code   int
		answer string
		hold   bool // the watch stays open until the client goes
	}{
		{"", 200, list("10", pod("a", "9")), false},
		{watchFrom("10"), 200, event("ADDED", pod("b", "11")) + event("MODIFIED", pod("b", "12")) + event("DELETED", pod("a", "13")) +
			event("BOOKMARK", `{"metadata":{"resourceVersion":"15"}}`), false},
		{watchFrom("15"), 200, event("ERROR", status(410, "Expired")), false},
		{"", 200, list("20", pod("b", "12"), pod("c", "19")), false},
		{watchFrom("20"), 410, status(410, "Gone"), false},
		{"", 200, list("30", pod("b", "12"), pod("c", "19")), false},
		{watchFrom("30"), 502, "no upstream", false},
		{watchFrom("30"), 200, event("ADDED", pod("d", "31")), true},
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := served
		served++
		mu.Unlock()
		if n >= len(steps) || r.URL.Path != "/api/v1/namespaces/ns/pods" || r.URL.RawQuery != steps[n].query {
			t.Errorf("request %d: %s %s, want step %d of the script", n, r.Method, r.URL, n)
			http.Error(w, "not in the script", http.StatusTeapot)
			cancel() // it has gone wrong: end it
			return
		}
		w.WriteHeader(steps[n].code)
		fmt.Fprint(w, steps[n].answer)
		if steps[n].hold {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	c := &Client{server: srv.URL, hc: srv.Client()}

	var got []string
	on := func(p *corev1.Pod) {
		got = append(got, p.Name)
		if p.Name == "d" {
			cancel()
		}
	}
	rv, err := c.listPods(ctx, "ns", on)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); c.followPods(ctx, "ns", rv, on) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch is still going after the last pod")
	}
	if want := []string{"a", "b", "b", "b", "c", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("pods shown %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if served != len(steps) {
		t.Errorf("%d requests, want the script's %d", served, len(steps))
	}
}
