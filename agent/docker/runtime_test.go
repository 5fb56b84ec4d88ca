package docker_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/docker"
	"github.com/helixml/helix-org/agent/docker/dockertest"
	"github.com/helixml/helix-org/domain"
)

// shared is one engine instance and one busybox image for the tests that
// do not inspect what the instance owns as a whole.
var shared struct {
	eng   *docker.Engine
	image string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	eng, err := dockertest.NewEngine()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := dockertest.Remove(eng); err != nil {
			fmt.Fprintln(os.Stderr, "clean up:", err)
		}
	}()
	img, err := dockertest.BuildImage(eng, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared.eng, shared.image = eng, img
	return m.Run()
}

type logSink struct {
	mu      sync.Mutex
	entries []domain.LogEntry
	onLine  func(string)
}

func (l *logSink) add(e domain.LogEntry) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
	if l.onLine != nil {
		l.onLine(e.Text)
	}
}

func (l *logSink) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.entries {
		fmt.Fprintf(&b, "%s:%s:%s\n", e.Kind, e.Tool, e.Text)
	}
	return b.String()
}

// testLimits are small, so the abuse probes hit them quickly.
var testLimits = docker.Limits{Memory: 48 << 20, NanoCPUs: 5e8, Pids: 64, TmpBytes: 1 << 20, User: "65534:65534"}

// newRuntime runs `true` in image unless a test sets Command. The MCP base
// is a fixed address: these tests do not talk to a server.
func newRuntime(eng *docker.Engine, image string) *docker.Runtime {
	return &docker.Runtime{Engine: eng, Image: image, Command: "true", Limits: testLimits, StopGrace: time.Second,
		MCPBase: func(context.Context) (string, error) { return "http://192.0.2.1:9", nil }}
}

// sh writes a script into the workspace: the runtime splits its command on
// spaces, so anything longer than a word goes through a file.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "probe.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return "probe.sh"
}

// newRun is a run as the dispatcher hands it over, mcp.json written.
func newRun(t *testing.T, log *logSink) domain.Run {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), domain.MCPConfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return domain.Run{ActivationID: "a-" + domain.RandomSlug(8), WorkerID: "w-echo", EnvDir: dir, MCPURL: "http://127.0.0.1:1/workers/w-echo/mcp",
		Token: "hxa_test", Prompt: "hello prompt", Timeout: time.Minute, Log: log.add}
}

func runScript(t *testing.T, rt *docker.Runtime, script string) (domain.RunResult, string, error) {
	t.Helper()
	var log logSink
	r := newRun(t, &log)
	rt.Command = "sh " + sh(t, r.EnvDir, script)
	res, err := rt.Run(t.Context(), r)
	return res, log.text(), err
}

// cueWait bounds how long runHeld waits for its cue: far longer than a
// container takes to start on a busy machine.
const cueWait = time.Minute

// runHeld is runScript for a script that waits, reading the FIFO hold in
// its workspace, until the run's log has shown a line containing cue:
// what the log shows by then it showed while the container ran.
func runHeld(t *testing.T, rt *docker.Runtime, script, cue string) (string, error) {
	t.Helper()
	var log logSink
	r := newRun(t, &log)
	hold := filepath.Join(r.EnvDir, "hold")
	if err := syscall.Mkfifo(hold, 0o666); err != nil {
		t.Fatal(err)
	}
	cued := make(chan struct{})
	var once sync.Once
	log.onLine = func(line string) {
		if strings.Contains(line, cue) {
			once.Do(func() { close(cued) })
		}
	}
	rt.Command = "sh " + sh(t, r.EnvDir, script)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(ctx, r)
		done <- err
	}()
	select {
	case <-cued:
	case err := <-done:
		t.Fatalf("the run ended (err %v) before its log showed %q:\n%s", err, cue, log.text())
	case <-time.After(cueWait):
		cancel()
		<-done
		t.Fatalf("the log did not show %q within %s while the container ran; it held:\n%s", cue, cueWait, log.text())
	}
	// Opening the FIFO waits for the script to open it too; closing it
	// ends the script's read.
	go func() {
		if f, err := os.OpenFile(hold, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}()
	err := <-done
	return log.text(), err
}

func TestRunInContainer(t *testing.T) {
	t.Parallel()
	var log logSink
	r := newRun(t, &log)
	script := `id -u; pwd; cat; echo
echo "url=$HELIX_ORG_MCP_URL token=$HELIX_ORG_TOKEN dir=$HELIX_ORG_ENV_DIR act=$HELIX_ORG_ACTIVATION"
echo "relay=$ANTHROPIC_BASE_URL key=$ANTHROPIC_API_KEY llm=$HELIX_ORG_LLM_BASE_URL llmkey=$HELIX_ORG_LLM_API_KEY model=$HELIX_ORG_LLM_MODEL"
env | grep -c sk-server-only || echo "no provider key"
echo "openai=$(env | grep -c ^OPENAI_BASE_URL=) $OPENAI_BASE_URL extra=$EXTRA"
grep -q hxa_ mcp.json || echo "no token in mcp.json"
grep -o '"url": "[^"]*"' mcp.json
grep -E '^(CapEff|NoNewPrivs)' /proc/self/status
touch /etc/x 2>&1 || echo "root is read-only"
echo kept > result.txt && echo "workspace is writable"
ls /var/run/docker.sock 2>&1 || echo "no docker socket"
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"thinking aloud"}]}}'
echo '{"type":"result","usage":{"input_tokens":7,"output_tokens":3}}'
echo oops >&2
exit 3
`
	rt := newRuntime(shared.eng, shared.image)
	rt.Command = "sh " + sh(t, r.EnvDir, script)
	rt.LLM = &agent.LLMConfig{Provider: "anthropic", Model: "m-1", BaseURL: "https://provider.example", APIKey: "sk-server-only"}
	// An operator's agent.docker.env replaces a variable; it does not add a second.
	rt.Env = map[string]string{"OPENAI_BASE_URL": "https://operator.example/v1", "EXTRA": "x"}
	res, err := rt.Run(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 || res.InputTokens != 7 || res.OutputTokens != 3 {
		t.Errorf("result = %+v, want exit 3 and 7/3 tokens", res)
	}
	out := log.text()
	for _, want := range []string{
		"output::65534\n", "output::/workspace\n", "output::hello prompt\n",
		"url=http://192.0.2.1:9/workers/w-echo/mcp token=hxa_test dir=/workspace act=" + r.ActivationID,
		"relay=http://192.0.2.1:9/relay/anthropic key=hxa_test llm=http://192.0.2.1:9/relay/anthropic llmkey=hxa_test model=m-1",
		"output::0\n", "no provider key", "no token in mcp.json", "openai=1 https://operator.example/v1 extra=x",
		`"url": "${HELIX_ORG_MCP_URL}"`, // the same file as on the host: the variable carries the address
		"CapEff:\t0000000000000000", "NoNewPrivs:\t1",
		"Read-only file system", "root is read-only", "workspace is writable", "no docker socket",
		"assistant::thinking aloud", "output::stderr: oops",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(r.EnvDir, "result.txt")); string(b) != "kept\n" {
		t.Errorf("workspace file = %q; the workspace must be the env dir", b)
	}
	assertNoContainers(t, shared.eng, r.ActivationID)
}

// assertNoContainers checks nothing of the activation is left, running or not.
func assertNoContainers(t *testing.T, eng *docker.Engine, activation string) {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelInstance+"="+eng.Instance()))
	if activation != "" {
		f.Add("label", docker.LabelActivation+"="+activation)
	}
	list, err := eng.Client().ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) > 0 {
		t.Errorf("%d container(s) left behind: %s %s", len(list), list[0].Names, list[0].State)
	}
}

func TestInspectShowsHardening(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var insp container.InspectResponse
	var inspErr error
	log := logSink{}
	r := newRun(t, &log)
	log.onLine = func(line string) {
		if line != "ready" {
			return
		}
		defer cancel()
		list, err := shared.eng.Client().ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelActivation+"="+r.ActivationID))})
		if err != nil || len(list) != 1 {
			inspErr = fmt.Errorf("list: %v (%d)", err, len(list))
			return
		}
		insp, inspErr = shared.eng.Client().ContainerInspect(ctx, list[0].ID)
	}
	rt := newRuntime(shared.eng, shared.image)
	rt.Command = "sh " + sh(t, r.EnvDir, "echo ready; exec sleep 600")
	res, err := rt.Run(ctx, r)
	if err == nil {
		t.Error("a cancelled run returned no error")
	}
	// The init process passes SIGTERM on to sleep, which ends on it.
	if res.Stop != agent.StopStopped || !strings.Contains(log.text(), "note::stop: the agent ended when asked (SIGTERM): stopped") {
		t.Errorf("stop = %q, want %q and the log to say so:\n%s", res.Stop, agent.StopStopped, log.text())
	}
	if inspErr != nil {
		t.Fatal(inspErr)
	}
	hc := insp.HostConfig
	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"memory", hc.Memory == testLimits.Memory && hc.MemorySwap == testLimits.Memory, hc.Memory},
		{"cpus", hc.NanoCPUs == testLimits.NanoCPUs, hc.NanoCPUs},
		{"pids", hc.PidsLimit != nil && *hc.PidsLimit == testLimits.Pids, hc.PidsLimit},
		{"capabilities dropped", len(hc.CapDrop) == 1 && hc.CapDrop[0] == "ALL" && len(hc.CapAdd) == 0, hc.CapDrop},
		{"no-new-privileges", len(hc.SecurityOpt) == 1 && hc.SecurityOpt[0] == "no-new-privileges:true", hc.SecurityOpt},
		{"read-only root", hc.ReadonlyRootfs, hc.ReadonlyRootfs},
		{"size-capped tmp", strings.Contains(hc.Tmpfs["/tmp"], fmt.Sprintf("size=%d", testLimits.TmpBytes)), hc.Tmpfs},
		{"not privileged", !hc.Privileged, hc.Privileged},
		{"non-root user", insp.Config.User == "65534:65534", insp.Config.User},
		{"only the workspace mounted", len(insp.Mounts) == 1 && insp.Mounts[0].Destination == docker.Workspace && insp.Mounts[0].Source == r.EnvDir && insp.Mounts[0].RW, insp.Mounts},
		{"only the agents network", len(insp.NetworkSettings.Networks) == 1 && insp.NetworkSettings.Networks[shared.eng.Name(docker.NetAgents)] != nil, insp.NetworkSettings.Networks},
		{"labelled", insp.Config.Labels[docker.LabelActivation] == r.ActivationID && insp.Config.Labels[docker.LabelInstance] == shared.eng.Instance(), insp.Config.Labels},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %v", c.name, c.got)
		}
	}
	assertNoContainers(t, shared.eng, r.ActivationID)
}

func TestHungAgentIsKilledAtTheTimeout(t *testing.T) {
	t.Parallel()
	var log logSink
	r := newRun(t, &log)
	rt := newRuntime(shared.eng, shared.image)
	// The agent ignores SIGTERM, so only the SIGKILL after the grace ends it.
	rt.Command = "sh " + sh(t, r.EnvDir, "trap '' TERM; echo hanging; while :; do sleep 1; done")
	// The run's deadline is set once the agent is running, so it meets a
	// hung agent and not one still starting: a container's start took
	// over 8 s on a loaded CI host.
	const timeout = time.Second
	ctx := newCueDeadline(t.Context())
	var hung time.Time
	log.onLine = func(line string) {
		if line == "hanging" && hung.IsZero() {
			hung = time.Now()
			ctx.arm(timeout)
		}
	}
	// An agent that never says it hangs ends the run anyway, and fails.
	never := time.AfterFunc(5*time.Minute, func() { ctx.arm(0) })
	defer never.Stop()
	res, err := rt.Run(ctx, r)
	if hung.IsZero() {
		t.Fatalf("the agent never said it was hanging; err = %v, log:\n%s", err, log.text())
	}
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("err = %v, want the deadline", err)
	}
	if want := "note::stop: the agent did not end within 1s of SIGTERM: killed (SIGKILL)"; res.Stop != agent.StopKilled || !strings.Contains(log.text(), want) {
		t.Errorf("stop = %q, want %q and the log to say %q:\n%s", res.Stop, agent.StopKilled, want, log.text())
	}
	// Generous: a loaded host is slow to kill and remove a container too;
	// a stop that waited for the agent would never end.
	if took, limit := time.Since(hung), timeout+rt.StopGrace+time.Minute; took > limit {
		t.Errorf("run ended %s after the agent hung; the container should be killed by %s", took, limit)
	}
	assertNoContainers(t, shared.eng, r.ActivationID)
}

// cueDeadline is a context whose deadline is set after it is handed
// over: it passes d after arm(d), so a test's timeout can count from a
// cue (the agent running) instead of from the call that starts it.
type cueDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newCueDeadline(parent context.Context) *cueDeadline {
	return &cueDeadline{Context: parent, done: make(chan struct{})}
}

func (c *cueDeadline) arm(d time.Duration) {
	c.once.Do(func() { time.AfterFunc(d, func() { close(c.done) }) })
}

func (c *cueDeadline) Done() <-chan struct{} { return c.done }

func (c *cueDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestAbuseIsContained(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   []string
		// cue, when set, holds the script at `read line < hold` until
		// the log shows it (runHeld).
		cue string
	}{
		// ash exits when it cannot fork, so the bomb runs in a subshell and
		// the report afterwards uses builtins only.
		{"fork bomb stops at the pids cap", `( i=0; while [ $i -lt 500 ]; do sleep 5 & i=$((i+1)); done ) 2>/tmp/err
for d in /sys/fs/cgroup/pids /sys/fs/cgroup; do [ -r $d/pids.current ] && read n < $d/pids.current && read m < $d/pids.max && echo "pids=$n max=$m" && break; done
while read line; do case "$line" in *"can't fork"*) echo "fork refused"; break;; esac; done < /tmp/err
echo "survived"`, []string{"fork refused", "survived", "max=64"}, ""},
		// The note comes while the agent lives on, before the script
		// goes on past its read.
		{"memory hog is OOM-killed alone", `tail /dev/zero; echo "hog exited $?"; read line < hold; echo "agent still alive"`,
			[]string{"hog exited 137", "agent still alive", "OOM-killed"}, "OOM-killed"},
		{"writes outside workspace and tmp fail", `for p in /x /bin/x /etc/passwd /workspace/../x; do touch $p 2>/dev/null && echo "wrote $p"; done
touch /workspace/ok /tmp/ok && echo "workspace and tmp writable"`,
			[]string{"workspace and tmp writable"}, ""},
		{"tmp is size-capped", `dd if=/dev/zero of=/tmp/big bs=1024 count=4096 2>&1 | grep -o "No space left on device"`,
			[]string{"No space left on device"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out string
			var err error
			if tc.cue != "" {
				out, err = runHeld(t, newRuntime(shared.eng, shared.image), tc.script, tc.cue)
			} else {
				_, out, err = runScript(t, newRuntime(shared.eng, shared.image), tc.script)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("log lacks %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "OOM-killed"); n > 1 {
				t.Errorf("the OOM note is logged %d times, want once:\n%s", n, out)
			}
			if strings.Contains(out, "wrote /") {
				t.Errorf("a write outside the workspace succeeded:\n%s", out)
			}
			if _, after, ok := strings.Cut(out, "pids="); ok {
				var n int
				fmt.Sscanf(after, "%d", &n)
				if n == 0 || n > int(testLimits.Pids) {
					t.Errorf("pids in use = %d, want at most the cap %d", n, testLimits.Pids)
				}
			}
		})
	}
}

// TestNetworkReach: an activation container reaches the server's listener
// on the agents network's gateway, and nothing beyond the host.
func TestNetworkReach(t *testing.T) {
	t.Parallel()
	net0, err := shared.eng.Network(t.Context(), docker.NetAgents)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net0.Listen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached-the-server") })}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	// The same nc probe reaching the server shows "blocked" is not a broken probe.
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	script := fmt.Sprintf(`wget -q -O - http://%s/ ; echo
nc -w 2 %s %s </dev/null && echo "server port open"
nc -w 2 169.254.169.254 80 </dev/null && echo "metadata reachable" || echo "metadata blocked"`, ln.Addr(), host, port)
	_, out, err := runScript(t, newRuntime(shared.eng, shared.image), script)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"reached-the-server", "server port open", "metadata blocked"} {
		if !strings.Contains(out, w) {
			t.Errorf("log lacks %q:\n%s", w, out)
		}
	}
}

func TestOverridesAndBinaryMount(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "marker")
	os.WriteFile(marker, []byte("worker-image\n"), 0o644)
	other := dockertest.Image(t, shared.eng, map[string]string{"/marker": marker})
	bin := filepath.Join(t.TempDir(), "helix-org")
	clitest.WriteExecutable(t, bin, "#!/bin/sh\necho mounted-binary\n")
	var log logSink
	r := newRun(t, &log)
	rt := newRuntime(shared.eng, shared.image)
	rt.Binary = bin
	rt.RoleOf = func(context.Context, string) (string, error) { return "r-echo", nil }
	rt.Overrides = docker.Overrides{
		Roles:   map[string]docker.Override{"r-echo": {Command: "sh /workspace/role.sh"}},
		Workers: map[string]docker.Override{"w-echo": {Image: other}},
	}
	os.WriteFile(filepath.Join(r.EnvDir, "role.sh"), []byte("cat /marker; helix-org; touch "+docker.BinaryPath+" 2>/dev/null || echo binary-read-only\n"), 0o644)
	if _, err := rt.Run(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"worker-image", "mounted-binary", "binary-read-only"} {
		if !strings.Contains(log.text(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.text())
		}
	}
}

func TestRefusesToMountTheDatabase(t *testing.T) {
	t.Parallel()
	var log logSink
	r := newRun(t, &log)
	rt := newRuntime(shared.eng, shared.image)
	rt.Forbidden = []string{filepath.Join(r.EnvDir, "sub", "helix-org.db")}
	_, err := rt.Run(t.Context(), r)
	if err == nil || !strings.Contains(err.Error(), "refusing to mount") {
		t.Errorf("err = %v", err)
	}
	assertNoContainers(t, shared.eng, r.ActivationID)
}

// TestReapRemovesLeftovers: what a crashed server left running is gone
// after the next start's Reap, and other instances' containers are not.
func TestReapRemovesLeftovers(t *testing.T) {
	t.Parallel()
	eng := dockertest.Engine(t)
	cli := eng.Client()
	mk := func(e *docker.Engine) string {
		c, err := cli.ContainerCreate(t.Context(), &container.Config{Image: shared.image, Cmd: []string{"sleep", "600"},
			Labels: e.Labels(docker.KindActivation, docker.LabelActivation, "a-crashed")}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.ContainerStart(t.Context(), c.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	mk(eng)
	survivor := mk(shared.eng)
	defer cli.ContainerRemove(context.Background(), survivor, container.RemoveOptions{Force: true})
	n, err := eng.Reap(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("reaped %d, %v; want 1", n, err)
	}
	assertNoContainers(t, eng, "")
	if _, err := cli.ContainerInspect(t.Context(), survivor); err != nil {
		t.Errorf("reap removed another instance's container: %v", err)
	}
}

// TestOCIRuntimeReachesDocker: the configured runtime is what the daemon
// is asked for (runsc is not installed here, so it refuses by name).
func TestOCIRuntimeReachesDocker(t *testing.T) {
	t.Parallel()
	var log logSink
	r := newRun(t, &log)
	rt := newRuntime(shared.eng, shared.image)
	rt.Limits.OCIRuntime = "runsc"
	_, err := rt.Run(t.Context(), r)
	if err == nil || !strings.Contains(err.Error(), "runsc") {
		t.Errorf("err = %v, want the daemon to refuse the unknown runtime runsc", err)
	}
	assertNoContainers(t, shared.eng, r.ActivationID)
}
