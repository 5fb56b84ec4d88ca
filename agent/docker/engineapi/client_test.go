package engineapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/google/go-cmp/cmp"
)

// fakeEngine answers /_ping with version and hands every other request to
// handle, recording each request's method, path and query.
type fakeEngine struct {
	version string
	handle  http.HandlerFunc

	mu   sync.Mutex
	seen []string
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if r.URL.Path == "/_ping" {
		if f.version != "" {
			w.Header().Set("Api-Version", f.version)
		}
		w.Header().Set("Ostype", "linux")
		io.WriteString(w, "OK")
		return
	}
	f.handle(w, r)
}

func (f *fakeEngine) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func newFake(t *testing.T, f *fakeEngine, pin string) *Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(Host{Network: "tcp", Addr: srv.Listener.Addr().String(), APIVersion: pin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestVersionNegotiation(t *testing.T) {
	list := func(v string) string { return "GET /v" + v + "/containers/json" }
	for _, tc := range []struct {
		name, engine, pin string
		want              []string
	}{
		{"older engine", "1.41", "", []string{"GET /_ping", list("1.41"), list("1.41")}},
		{"newer engine", "1.99", "", []string{"GET /_ping", list(MaxAPIVersion), list(MaxAPIVersion)}},
		{"engine names none", "", "", []string{"GET /_ping", list("1.24"), list("1.24")}},
		{"DOCKER_API_VERSION pins it", "1.41", "1.40", []string{list("1.40"), list("1.40")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var query []string
			f := &fakeEngine{version: tc.engine, handle: func(w http.ResponseWriter, r *http.Request) {
				query = append(query, r.URL.RawQuery)
				io.WriteString(w, "[]")
			}}
			c := newFake(t, f, tc.pin)
			opts := container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", "org.helix-org.instance=x"))}
			for range 2 { // negotiated once
				if _, err := c.ContainerList(t.Context(), opts); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(tc.want, f.requests()); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
			q, _ := url.ParseQuery(query[0])
			want := url.Values{"all": {"1"}, "filters": {`{"label":{"org.helix-org.instance=x":true}}`}}
			if d := cmp.Diff(want, q); d != "" {
				t.Errorf("query (-want +got):\n%s", d)
			}
		})
	}
}

func TestPingSettlesVersion(t *testing.T) {
	f := &fakeEngine{version: "1.43", handle: func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "[]") }}
	c := newFake(t, f, "")
	p, err := c.Ping(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != "1.43" || p.OSType != "linux" || c.Version() != "1.43" {
		t.Errorf("ping = %+v, version %s; want 1.43 linux, 1.43", p, c.Version())
	}
	if _, err := c.ImageList(t.Context(), image.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"GET /_ping", "GET /v1.43/images/json"}, f.requests()); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

func TestEngineErrors(t *testing.T) {
	for _, tc := range []struct {
		name               string
		status             int
		body               string
		notFound, conflict bool
		wantIn             string
	}{
		{"404", http.StatusNotFound, `{"message":"No such container: abc"}`, true, false, "No such container: abc"},
		{"409", http.StatusConflict, `{"message":"Conflict. The container name \"/x\" is already in use"}`, false, true, `The container name "/x" is already in use`},
		{"500 not JSON", http.StatusInternalServerError, "proxy broke\n", false, false, "proxy broke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFake(t, &fakeEngine{version: "1.41", handle: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}}, "")
			_, err := c.ContainerInspect(t.Context(), "abc")
			if err == nil {
				t.Fatal("no error")
			}
			wrapped := fmt.Errorf("inspect: %w", err)
			if IsNotFound(wrapped) != tc.notFound || IsConflict(wrapped) != tc.conflict {
				t.Errorf("IsNotFound %v, IsConflict %v; want %v, %v", IsNotFound(wrapped), IsConflict(wrapped), tc.notFound, tc.conflict)
			}
			if !strings.Contains(err.Error(), tc.wantIn) || !strings.Contains(err.Error(), "/v1.41/containers/abc/json") {
				t.Errorf("error %q does not carry %q and the path", err, tc.wantIn)
			}
		})
	}
}

func TestResponseSizeLimit(t *testing.T) {
	c := newFake(t, &fakeEngine{version: "1.41", handle: func(w http.ResponseWriter, _ *http.Request) {
		// A valid JSON string just over the limit.
		io.WriteString(w, `"`)
		w.Write(bytes.Repeat([]byte("a"), maxBody))
		io.WriteString(w, `"`)
	}}, "")
	_, err := c.ImageInspect(t.Context(), "big")
	if err == nil || !strings.Contains(err.Error(), "over 16 MiB") {
		t.Errorf("err = %v, want the answer refused as over 16 MiB", err)
	}
}

func TestParseHost(t *testing.T) {
	for _, tc := range []struct {
		in      string
		tls     bool
		want    Host
		wantErr string
	}{
		{in: "", want: Host{Network: "unix", Addr: "/var/run/docker.sock"}},
		{in: "unix:///run/user/1000/docker.sock", want: Host{Network: "unix", Addr: "/run/user/1000/docker.sock"}},
		{in: "tcp://10.0.0.5:2375", want: Host{Network: "tcp", Addr: "10.0.0.5:2375"}},
		{in: "tcp://docker.example", want: Host{Network: "tcp", Addr: "docker.example:2375"}},
		{in: "tcp://docker.example", tls: true, want: Host{Network: "tcp", Addr: "docker.example:2376"}},
		{in: "tcp://[::1]:2376", want: Host{Network: "tcp", Addr: "[::1]:2376"}},
		{in: "ssh://me@box", wantErr: `DOCKER_HOST "ssh://me@box": ssh:// engines are not supported`},
		{in: "npipe:////./pipe/docker_engine", wantErr: "npipe:// engines are not supported"},
		{in: "unix://", wantErr: "names no socket"},
		{in: "tcp://", wantErr: "want tcp://host:port"},
		{in: "tcp://host:2375/base", wantErr: "a path after the address"},
		{in: "/var/run/docker.sock", wantErr: `DOCKER_HOST "/var/run/docker.sock": want unix://`},
		{in: "gopher://x", wantErr: `unknown scheme "gopher"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			h, err := ParseHost(tc.in, tc.tls)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, h); d != "" {
				t.Errorf("host (-want +got):\n%s", d)
			}
		})
	}
}

func TestHostFromEnvRefusesSSH(t *testing.T) {
	t.Setenv("DOCKER_HOST", "ssh://me@box")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "DOCKER_HOST") {
		t.Errorf("err = %v, want a refusal naming DOCKER_HOST", err)
	}
}

func TestHostFromEnvPinsVersion(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
	t.Setenv("DOCKER_API_VERSION", "1.44")
	t.Setenv("DOCKER_TLS_VERIFY", "")
	t.Setenv("DOCKER_CERT_PATH", "")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != "1.44" || c.host.TLS != nil {
		t.Errorf("version %s, TLS %v; want 1.44 and none", c.Version(), c.host.TLS)
	}
}

func TestHostFromEnvNeedsCA(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1")
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	t.Setenv("DOCKER_CERT_PATH", t.TempDir())
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "ca.pem") {
		t.Errorf("err = %v, want one about the missing ca.pem", err)
	}
}

// TestAttach plays the engine's side of an attach: a 101, then the
// container's stdin echoed on stdout once stdin ends — which it does
// only if CloseWrite half-closes the connection.
func TestAttach(t *testing.T) {
	c := newFake(t, &fakeEngine{version: "1.45", handle: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1.45/containers/abc/attach" || r.Header.Get("Upgrade") != "tcp" || r.URL.Query().Get("stdin") != "1" {
			http.Error(w, `{"message":"bad attach"}`, http.StatusBadRequest)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
		in, _ := io.ReadAll(buf)
		out := stdcopy.NewStdWriter(conn, stdcopy.Stdout)
		fmt.Fprintf(out, "got %s", in)
		fmt.Fprint(stdcopy.NewStdWriter(conn, stdcopy.Stderr), "bye")
	}}, "")
	hj, err := c.ContainerAttach(t.Context(), "abc", container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Close()
	if mt, _ := hj.MediaType(); mt != "application/vnd.docker.multiplexed-stream" {
		t.Errorf("media type %q", mt)
	}
	if _, err := io.WriteString(hj.Conn, "the prompt"); err != nil {
		t.Fatal(err)
	}
	if err := hj.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, hj.Reader); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "got the prompt" || stderr.String() != "bye" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestAttachRefused(t *testing.T) {
	c := newFake(t, &fakeEngine{version: "1.45", handle: func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"No such container: gone"}`)
	}}, "")
	_, err := c.ContainerAttach(t.Context(), "gone", container.AttachOptions{Stream: true, Stdout: true})
	if !IsNotFound(err) || !strings.Contains(err.Error(), "No such container: gone") {
		t.Errorf("err = %v, want not found with the engine's message", err)
	}
}

func TestImageBuild(t *testing.T) {
	var got struct {
		query       map[string][]string
		contentType string
		body        string
	}
	c := newFake(t, &fakeEngine{version: "1.45", handle: func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.query, got.contentType, got.body = r.URL.Query(), r.Header.Get("Content-Type"), string(b)
		json.NewEncoder(w).Encode(map[string]string{"stream": "Step 1/1\n"})
	}}, "")
	resp, err := c.ImageBuild(t.Context(), strings.NewReader("tarball"), build.ImageBuildOptions{
		Tags: []string{"x:1"}, Dockerfile: "Dockerfile", NetworkMode: "none", Remove: true, ForceRemove: true,
		Version: build.BuilderV1, Memory: 64 << 20, MemorySwap: 64 << 20, Labels: map[string]string{"a": "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	want := map[string][]string{"t": {"x:1"}, "dockerfile": {"Dockerfile"}, "networkmode": {"none"}, "forcerm": {"1"},
		"version": {"1"}, "memory": {"67108864"}, "memswap": {"67108864"}, "labels": {`{"a":"b"}`}}
	if d := cmp.Diff(want, got.query); d != "" {
		t.Errorf("query (-want +got):\n%s", d)
	}
	if got.contentType != "application/x-tar" || got.body != "tarball" || !strings.Contains(line, "Step 1/1") {
		t.Errorf("content type %q, body %q, answer %q", got.contentType, got.body, line)
	}
}

// TestEvents plays the engine's side of /events: newline-delimited events
// on a stream that stays open until the client goes.
func TestEvents(t *testing.T) {
	var query url.Values
	c := newFake(t, &fakeEngine{version: "1.45", handle: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1.45/events" {
			http.Error(w, `{"message":"bad path"}`, http.StatusNotFound)
			return
		}
		query = r.URL.Query()
		io.WriteString(w, `{"status":"oom","id":"abc","Type":"container","Action":"oom","Actor":{"ID":"abc","Attributes":{"name":"x"}},"scope":"local","time":1700000000,"timeNano":1700000000000000001}`+"\n")
		io.WriteString(w, `{"Type":"container","Action":"die","Actor":{"ID":"abc","Attributes":{"exitCode":"137"}},"time":1700000001}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}}, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := filters.NewArgs(filters.Arg("type", "container"), filters.Arg("container", "abc"), filters.Arg("event", "oom"))
	msgs, errs := c.Events(ctx, events.ListOptions{Since: "0", Filters: f})
	var got []events.Message
	for range 2 {
		select {
		case m := <-msgs:
			got = append(got, m)
		case err := <-errs:
			t.Fatalf("stream ended after %d events: %v", len(got), err)
		}
	}
	want := []events.Message{
		{Status: "oom", ID: "abc", Type: events.ContainerEventType, Action: events.ActionOOM, Actor: events.Actor{ID: "abc", Attributes: map[string]string{"name": "x"}},
			Scope: "local", Time: 1700000000, TimeNano: 1700000000000000001},
		{Type: events.ContainerEventType, Action: events.ActionDie, Actor: events.Actor{ID: "abc", Attributes: map[string]string{"exitCode": "137"}}, Time: 1700000001},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	wantQuery := url.Values{"since": {"0"}, "filters": {`{"container":{"abc":true},"event":{"oom":true},"type":{"container":true}}`}}
	if d := cmp.Diff(wantQuery, query); d != "" {
		t.Errorf("query (-want +got):\n%s", d)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v after the context ended, want it canceled", err)
	}
}

func TestEventsEnd(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		events     int
		wantErr    string
	}{
		{"the engine ends the stream", `{"Type":"container","Action":"oom"}` + "\n", 1, "EOF"},
		{"an event over the bound", `{"Type":"container","Action":"` + strings.Repeat("a", maxEvent), 0, "an event is over 1024 KiB"},
		{"not JSON", "proxy broke\n", 0, "an event does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFake(t, &fakeEngine{version: "1.45", handle: func(w http.ResponseWriter, _ *http.Request) {
				io.WriteString(w, tc.body)
			}}, "")
			msgs, errs := c.Events(t.Context(), events.ListOptions{})
			n, err := 0, error(nil)
			for err == nil {
				select {
				case <-msgs:
					n++
				case err = <-errs:
				}
			}
			if n != tc.events || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%d event(s), then err = %v; want %d and one containing %q", n, err, tc.events, tc.wantErr)
			}
		})
	}
}
