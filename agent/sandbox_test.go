package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// TestMain lets the test binary stand in for a server on a host where
// bubblewrap cannot run (HELIX_ORG_AGENT_TEST=check-sandbox): it prints
// what CheckSandbox finds.
func TestMain(m *testing.M) {
	if os.Getenv("HELIX_ORG_AGENT_TEST") == "check-sandbox" {
		fmt.Println(agent.CheckSandbox(context.Background(), "").Err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sandbox is bubblewrap as this host runs it, sharing paths. The tests
// need it: CI installs bubblewrap.
func sandbox(t *testing.T, paths agent.SandboxPaths) *agent.Bwrap {
	t.Helper()
	check := agent.CheckSandbox(t.Context(), "")
	if check.Err != nil {
		t.Fatalf("bubblewrap cannot run here: %v", check.Err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &agent.Bwrap{Path: check.Bwrap, Exe: exe, Paths: paths}
}

// uniqueRun is newRun with an activation id no other test (or other
// checkout's test on this host) uses, for finding its processes.
func uniqueRun(t *testing.T, log *logSink) domain.Run {
	run := newRun(t, log)
	run.ActivationID = fmt.Sprintf("a-%d-%d", os.Getpid(), time.Now().UnixNano())
	return run
}

// TestSandboxConfinesTheAgent runs one command that tries what an agent
// should not be able to, in the sandbox and, to show each try can
// succeed, on the host: inside, it is nobody with no capabilities, sees
// no process but its own, can write only its own directory and its
// tmpfs, and finds nothing of the database, the key file, another
// worker's directory, the server's environment or the Docker socket.
func TestSandboxConfinesTheAgent(t *testing.T) {
	root := t.TempDir()
	own, other := filepath.Join(root, "envs", "w-a"), filepath.Join(root, "envs", "w-b")
	db := filepath.Join(root, "helix-org.db")
	for path, data := range map[string]string{filepath.Join(other, "role.md"): "the other worker's role", db: "SQLite format 3", db + ".key": "key"} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(data), 0o600)
	}
	os.MkdirAll(own, 0o700)
	checks := []struct {
		name, sh        string
		sandbox, onHost string // "" on the host: whatever it is there
	}{
		{"prompt on stdin", `cat`, "hello prompt", "hello prompt"},
		{"uid", `id -u`, "65534", strconv.Itoa(os.Getuid())},
		{"capabilities", `sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status`, "0000000000000000", ""},
		{"working directory", `pwd`, own, own},
		{"processes of other runs or the server", `n=0; for p in /proc/[0-9]*; do grep -qz "^HELIX_ORG_ACTIVATION=$HELIX_ORG_ACTIVATION" $p/environ 2>/dev/null || n=$((n+1)); done; [ $n = 0 ] && echo none`, "none", "(failed)"},
		{"the server's environment", `tr '\0' '\n' </proc/` + strconv.Itoa(os.Getpid()) + `/environ | grep -q '^PATH=' && echo readable`, "(failed)", "readable"},
		{"its own environment", `echo $HELIX_ORG_TOKEN $HOME $TMPDIR`, "hxa_test " + agent.SandboxHome + " /tmp", ""},
		{"the envs dir", `ls ..`, "w-a", "w-a\nw-b"},
		{"another worker's directory", `cat ` + other + `/role.md`, "(failed)", "the other worker's role"},
		{"the database", `head -c 15 ` + db, "(failed)", "SQLite format 3"},
		{"the key file", `cat ` + db + `.key`, "(failed)", "key"},
		{"write its own directory", `echo made > made && cat made`, "made", "made"},
		{"write HOME", `touch "$HOME/x" && echo ok`, "ok", ""},
		{"write /tmp", `touch /tmp/x && echo ok`, "ok", "ok"},
		{"write /usr", `touch /usr/helix-org-sandbox-test && echo ok`, "(failed)", ""},
		{"a new user namespace", `unshare -U true && echo ok`, "(failed)", ""},
		{"/etc/shadow", `head -c 5 /etc/shadow`, "(failed)", "root:"},
		{"the Docker socket", `ls /run/docker.sock /var/run/docker.sock`, "(failed)", ""},
		{"root's home", `ls -d /root`, "(failed)", "/root"},
	}
	var script strings.Builder
	for _, c := range checks {
		fmt.Fprintf(&script, "printf '%%s\\t%%s\\n' %q \"$( (%s) 2>/dev/null || echo '(failed)')\"\n", c.name, c.sh)
	}
	for _, tt := range []struct {
		name string
		sb   *agent.Bwrap
	}{{"sandbox", sandbox(t, agent.SandboxPaths{})}, {"host", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			var log logSink
			run := uniqueRun(t, &log)
			run.EnvDir = own
			res, err := (&agent.Command{Line: script.String(), Sandbox: tt.sb}).Run(t.Context(), run)
			if err != nil || res.ExitStatus != 0 {
				t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
			}
			got := map[string]string{}
			var last string
			for _, line := range log.texts() {
				line = strings.TrimPrefix(line, "output::")
				if name, v, ok := strings.Cut(line, "\t"); ok {
					got[name], last = v, name
				} else if last != "" {
					got[last] += "\n" + line
				}
			}
			for _, c := range checks {
				want := c.sandbox
				if tt.sb == nil {
					want = c.onHost
				}
				if want != "" && got[c.name] != want {
					t.Errorf("%s: got %q, want %q", c.name, got[c.name], want)
				}
			}
			if data, err := os.ReadFile(filepath.Join(own, "made")); err != nil || string(data) != "made\n" {
				t.Errorf("what the agent wrote in its directory: %q, %v", data, err)
			}
		})
	}
}

// members lists the live processes of a process group, as the host sees them.
func members(pgid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(data, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out[pid] = string(data[bytes.IndexByte(data, '(')+1 : i])
		}
	}
	return out
}

// TestAgentKilledFromOutsideIsKilled: an agent that a shell did not exec
// (`X=1 sleep 60`), killed by a signal the server did not send, exits
// 128+n through the shell — and through bwrap — and the run says it was
// killed, so its triggers run again; an agent that exits 137 of its own
// accord is killed too, and one the server stops is not.
func TestAgentKilledFromOutsideIsKilled(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sb     *agent.Bwrap
		signal syscall.Signal
		want   int
	}{
		{"host, SIGKILL", nil, syscall.SIGKILL, 137},
		{"host, SIGTERM", nil, syscall.SIGTERM, 143},
		{"sandbox, SIGKILL", sandbox(t, agent.SandboxPaths{}), syscall.SIGKILL, 137},
		{"sandbox, SIGTERM", sandbox(t, agent.SandboxPaths{}), syscall.SIGTERM, 143},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log logSink
			run := uniqueRun(t, &log)
			started := make(chan domain.AgentProcess, 1)
			run.OnStart = func(p domain.AgentProcess) { started <- p }
			type result struct {
				res domain.RunResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := (&agent.Command{Line: "X=1 sleep 60", Sandbox: tt.sb}).Run(t.Context(), run)
				done <- result{res, err}
			}()
			p := <-started
			sleeper := 0
			poll(t, "a sleep in the agent's process group", func() bool {
				for pid, comm := range members(p.PGID) {
					if comm == "sleep" {
						sleeper = pid
					}
				}
				return sleeper != 0
			})
			if err := syscall.Kill(sleeper, tt.signal); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.res.ExitStatus != tt.want || !r.res.Killed {
				t.Errorf("run = %+v, %v; want exit %d, killed", r.res, r.err, tt.want)
			}
		})
	}
	t.Run("stopped by the server", func(t *testing.T) {
		var log logSink
		ctx, cancel := context.WithCancel(t.Context())
		run := uniqueRun(t, &log)
		run.OnStart = func(domain.AgentProcess) {
			go func() {
				for len(processesOf(run.ActivationID, "sleep")) == 0 && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond) // polling /proc for the agent's sleep
				}
				cancel()
			}()
		}
		res, err := (&agent.Command{Line: "X=1 sleep 60", Sandbox: sandbox(t, agent.SandboxPaths{})}).Run(ctx, run)
		if err == nil || res.Killed {
			t.Errorf("run = %+v, %v; want the context's error, not killed", res, err)
		}
	})
	t.Run("exits 137 of its own accord", func(t *testing.T) {
		var log logSink
		res, err := (&agent.Command{Line: "exit 137"}).Run(t.Context(), uniqueRun(t, &log))
		if err != nil || !res.Killed {
			t.Errorf("run = %+v, %v; want killed (a shell cannot tell the two apart)", res, err)
		}
	})
}

// TestSandboxedAgentStops: when the server stops a sandboxed run, SIGTERM
// reaches the agent inside, which may finish; and a group kill of what
// the run recorded (a restarted server's StopOrphans) ends everything in
// the sandbox, even a process that left the group.
func TestSandboxedAgentStops(t *testing.T) {
	t.Run("SIGTERM reaches the agent", func(t *testing.T) {
		var log logSink
		ctx, cancel := context.WithCancel(t.Context())
		run := uniqueRun(t, &log)
		run.Log = func(e domain.LogEntry) {
			log.add(e)
			if e.Text == "ready" {
				cancel()
			}
		}
		start := time.Now()
		_, err := (&agent.Command{Line: `trap 'echo got TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; done`, Sandbox: sandbox(t, agent.SandboxPaths{})}).Run(ctx, run)
		if err == nil {
			t.Error("cancelled run returned no error")
		}
		if el := time.Since(start); el > agent.StopGrace {
			t.Errorf("stop took %s; SIGTERM should end it before the SIGKILL grace", el)
		}
		if !strings.Contains(strings.Join(log.texts(), "\n"), "output::got TERM") {
			t.Errorf("the agent did not see SIGTERM: %q", log.texts())
		}
	})
	t.Run("an orphan's group kill ends the sandbox", func(t *testing.T) {
		var log logSink
		run := uniqueRun(t, &log)
		started := make(chan domain.AgentProcess, 1)
		run.OnStart = func(p domain.AgentProcess) { started <- p }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			(&agent.Command{Line: "setsid sleep 600 & sleep 600", Sandbox: sandbox(t, agent.SandboxPaths{})}).Run(ctx, run)
			close(done)
		}()
		t.Cleanup(func() { cancel(); <-done })
		p := <-started
		poll(t, "both sleeps of the run, one in a session of its own", func() bool { return len(processesOf(run.ActivationID, "sleep")) == 2 })
		outside := 0
		for _, pid := range processesOf(run.ActivationID, "sleep") {
			if _, ok := members(p.PGID)[pid]; !ok {
				outside++
			}
		}
		if outside != 1 {
			t.Fatalf("%d sleeps outside the recorded group %v, want the one that left it", outside, members(p.PGID))
		}
		n, err := agent.StopOrphans(t.Context(), []domain.Activation{{ID: run.ActivationID, Process: &p}})
		if err != nil || n != 1 {
			t.Fatalf("StopOrphans = %d, %v", n, err)
		}
		// The kernel tears the namespace down after its init dies.
		poll(t, "no process of the run left", func() bool { return len(processesOf(run.ActivationID, "")) == 0 })
	})
}

// processesOf lists the live processes whose environment names the
// activation (and whose command is comm, when set).
func processesOf(activation, comm string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		name, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if bytes.Contains(env, []byte("HELIX_ORG_ACTIVATION="+activation+"\x00")) && (comm == "" || strings.TrimSpace(string(name)) == comm) {
			out = append(out, pid)
		}
	}
	return out
}

// TestCheckSandbox: the start-up check passes here, with bwrap found on
// PATH or where Debian puts it, and says why where bwrap is missing or
// cannot create namespaces — the last made real by running the check in
// a sandbox that allows no more user namespaces.
func TestCheckSandbox(t *testing.T) {
	if check := agent.CheckSandbox(t.Context(), ""); check.Err != nil || check.Bwrap == "" {
		t.Fatalf("CheckSandbox here = %+v", check)
	}
	t.Run("no bwrap on PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if check := agent.CheckSandbox(t.Context(), ""); check.Err != nil || check.Bwrap != "/usr/bin/bwrap" {
			t.Errorf("CheckSandbox = %+v, want Debian's /usr/bin/bwrap", check)
		}
	})
	t.Run("no bwrap", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "bwrap")
		if err := agent.CheckSandbox(t.Context(), missing).Err; err == nil || !strings.Contains(err.Error(), missing+" could not start a sandbox") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no user namespaces", func(t *testing.T) {
		exe, _ := os.Executable()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "HELIX_ORG_AGENT_TEST=check-sandbox")
		if err := sandbox(t, agent.SandboxPaths{}).Wrap(cmd, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "could not start a sandbox") || !strings.Contains(string(out), "namespace") {
			t.Errorf("CheckSandbox without user namespaces: %s (%v)", out, err)
		}
	})
}

// poll waits up to 10s for cond, checking every 10ms.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// TestSandboxTakesARelativeWorkerDirectory: `serve --envs-dir ./envs`
// gives runs a directory relative to the server's; the sandbox binds and
// enters it by its absolute path.
func TestSandboxTakesARelativeWorkerDirectory(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "envs", "w-a"), 0o700)
	t.Chdir(root)
	var log logSink
	run := uniqueRun(t, &log)
	run.EnvDir = filepath.Join("envs", "w-a")
	res, err := (&agent.Command{Line: "pwd; echo hi > made", Sandbox: sandbox(t, agent.SandboxPaths{})}).Run(t.Context(), run)
	if err != nil || res.ExitStatus != 0 {
		t.Fatalf("run = %+v, %v; log %q", res, err, log.texts())
	}
	if got := log.texts(); len(got) != 1 || got[0] != "output::"+filepath.Join(root, "envs", "w-a") {
		t.Errorf("log = %q, want the absolute directory", got)
	}
	if data, err := os.ReadFile(filepath.Join(root, "envs", "w-a", "made")); err != nil || string(data) != "hi\n" {
		t.Errorf("made = %q, %v", data, err)
	}
}

// BenchmarkCommandStart is what the sandbox adds to a run: a command that
// does nothing, on the host and in the sandbox.
func BenchmarkCommandStart(b *testing.B) {
	check := agent.CheckSandbox(b.Context(), "")
	if check.Err != nil {
		b.Fatal(check.Err)
	}
	exe, _ := os.Executable()
	for _, bm := range []struct {
		name string
		sb   *agent.Bwrap
	}{{"host", nil}, {"sandbox", &agent.Bwrap{Path: check.Bwrap, Exe: exe}}} {
		b.Run(bm.name, func(b *testing.B) {
			run := domain.Run{ActivationID: "a-bench", WorkerID: "w-bench", EnvDir: b.TempDir(), Log: func(domain.LogEntry) {}}
			for b.Loop() {
				if res, err := (&agent.Command{Line: "true", Sandbox: bm.sb}).Run(b.Context(), run); err != nil || res.ExitStatus != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}
