package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// shareWithAgents lets every sandboxed agent of st's server write paths
// (agent.sandbox.paths): for tests whose agents report through files
// outside their worker's directory.
func shareWithAgents(t *testing.T, st *store.Store, paths ...string) {
	t.Helper()
	v, err := json.Marshal(agent.SandboxPaths{Writable: paths})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(t.Context(), agent.SandboxPathsSetting, string(v)); err != nil {
		t.Fatal(err)
	}
}

// groupMembers lists the live processes of a process group as the host
// sees them.
func groupMembers(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !processAlive(pid) {
			continue
		}
		data, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(data, ')')
		if f := strings.Fields(string(data[i+1:])); i >= 0 && len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// probeTargets is what the probe agent is told to try, from its
// probe.json: the other concurrent run's processes and what of the
// server it must not reach.
type probeTargets struct {
	OtherPIDs  []int             `json:"otherPids"`
	ServerPID  int               `json:"serverPid"`
	ServerNS   map[string]string `json:"serverNs"`
	DB         string            `json:"db"`
	Key        string            `json:"key"`
	OtherDir   string            `json:"otherDir"`
	ServerDir  string            `json:"serverDir"`
	ServerHome string            `json:"serverHome"`
	Shared     string            `json:"shared"`
}

// probeNamespaces are the namespaces the probe compares with the server's.
var probeNamespaces = []string{"cgroup", "ipc", "net", "pid", "user", "uts"}

// probeAgent tries, from wherever its runtime put it, to reach what an
// agent must not, and what it must: it waits for probe.json in its
// directory, prints "probe <what>: <result>" lines, then holds until the
// test writes release, so the other run is alive while it is probed.
func probeAgent() int {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	readPrompt()
	var tg probeTargets
	if data, err := waitForFile(ctx, "probe.json"); err != nil || json.Unmarshal(data, &tg) != nil {
		fmt.Println("probe: no probe.json:", err)
		return 1
	}
	say := func(what, result string) { fmt.Printf("probe %s: %s\n", what, result) }
	say("uid", strconv.Itoa(os.Getuid()))
	say("capabilities", capabilities())
	say("new user namespace", outcome(exec.Command("unshare", "-U", "true").Run(), "allowed", "refused"))
	say("namespaces shared with the server", sharedNamespaces(tg.ServerNS))
	say("processes of others", othersVisible())
	say("other run's environment", otherEnviron(tg.OtherPIDs))
	say("server's environment", readable(fmt.Sprintf("/proc/%d/environ", tg.ServerPID)))
	say("database", readable(tg.DB))
	say("key file", readable(tg.Key))
	say("other worker's directory", listable(tg.OtherDir))
	say("server's working directory", listable(tg.ServerDir))
	say("server's HOME", listable(tg.ServerHome))
	say("Docker socket", present("/run/docker.sock", "/var/run/docker.sock"))
	wd, _ := os.Getwd()
	say("working directory", map[bool]string{true: "its worker's directory", false: wd}[wd == os.Getenv("HELIX_ORG_ENV_DIR")])
	say("own directory", writable("."))
	say("HOME", home())
	say("/tmp", writable("/tmp"))
	say("/usr", mountMode("/usr"))
	say("/etc/passwd", readable("/etc/passwd"))
	say("/etc/shadow", present("/etc/shadow"))
	say("TLS roots", listable("/etc/ssl/certs"))
	say("shared path", readable(filepath.Join(tg.Shared, "shared.txt")))
	if cs, _, _, err := connectFromEnv(ctx); err != nil {
		say("MCP endpoint", err.Error())
	} else {
		_, err := cs.ListTools(ctx, nil)
		cs.Close()
		say("MCP endpoint", outcome(err, "reached", "failed"))
	}
	_, err := relayCall(ctx, false)
	say("model relay", outcome(err, "reached", fmt.Sprint("failed: ", err)))
	if err := os.WriteFile("probed", nil, 0o600); err != nil {
		return 1
	}
	if _, err := waitForFile(ctx, "release"); err != nil {
		return 1
	}
	return 0
}

// waitForFile polls for a file the test writes.
func waitForFile(ctx context.Context, name string) ([]byte, error) {
	for {
		if data, err := os.ReadFile(name); err == nil {
			return data, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func outcome(err error, ok, failed string) string {
	if err != nil {
		return failed
	}
	return ok
}

func readable(path string) string {
	_, err := os.ReadFile(path)
	return outcome(err, "readable", "unreadable")
}

func listable(dir string) string {
	_, err := os.ReadDir(dir)
	return outcome(err, "readable", "unreadable")
}

func present(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return "present"
		}
	}
	return "absent"
}

func writable(dir string) string {
	f, err := os.CreateTemp(dir, "probe-")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
	}
	return outcome(err, "writable", "not writable")
}

// mountMode reads the mount's flags rather than writing: off the
// sandbox, as root, a write would succeed on the host's /usr.
func mountMode(dir string) string {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return err.Error()
	}
	return map[bool]string{true: "read-only", false: "writable"}[fs.Flags&1 != 0] // ST_RDONLY
}

func home() string {
	h := os.Getenv("HOME")
	entries, err := os.ReadDir(h)
	if err != nil {
		return h + ", " + err.Error()
	}
	return fmt.Sprintf("%s, %d entries, %s", h, len(entries), writable(h))
}

func capabilities() string {
	data, _ := os.ReadFile("/proc/self/status")
	m := regexp.MustCompile(`(?m)^CapEff:\s*(\S+)`).FindSubmatch(data)
	if m == nil || strings.Trim(string(m[1]), "0") == "" {
		return "none"
	}
	return string(m[1])
}

func sharedNamespaces(server map[string]string) string {
	var shared []string
	for _, ns := range probeNamespaces {
		if own, err := os.Readlink("/proc/self/ns/" + ns); err == nil && own == server[ns] {
			shared = append(shared, ns)
		}
	}
	return strings.Join(shared, " ")
}

// othersVisible says whether /proc shows a process not of this run.
func othersVisible() string {
	mark := []byte("HELIX_ORG_ACTIVATION=" + os.Getenv("HELIX_ORG_ACTIVATION") + "\x00")
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		if env, err := os.ReadFile(dir + "/environ"); err != nil || !bytes.Contains(env, mark) {
			if _, err := os.Stat(dir); err == nil { // not one that just ended
				return "visible"
			}
		}
	}
	return "none"
}

// otherEnviron reads the other run's processes' environments for a token.
func otherEnviron(pids []int) string {
	for _, pid := range pids {
		if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && bytes.Contains(env, []byte("HELIX_ORG_TOKEN=hxa_")) {
			return "readable"
		}
	}
	return "unreadable"
}

// probeCheck is one line of the probe's report: what it says in the
// sandbox, and with agent.sandbox off ("" there: whatever the host allows).
type probeCheck struct{ what, sandboxed, off string }

// sandboxClaims are docs/security.md's sentences on what a host agent can
// reach, each with the probe's lines that prove it.
var sandboxClaims = []struct {
	sentence string
	checks   []probeCheck
}{
	{"It runs as `nobody` (uid 65534) in user, pid, IPC, UTS and cgroup namespaces of its own, with no capabilities, and cannot make further user namespaces.",
		[]probeCheck{{"uid", "65534", strconv.Itoa(os.Getuid())}, {"capabilities", "none", ""}, {"new user namespace", "refused", ""},
			{"namespaces shared with the server", "net", strings.Join(probeNamespaces, " ")}}},
	{"It sees only its own processes: not other runs', whose environment holds their tokens, nor the server's.",
		[]probeCheck{{"processes of others", "none", "visible"}, {"other run's environment", "unreadable", "readable"}, {"server's environment", "unreadable", "readable"}}},
	{"It can write its worker's directory, which is its working directory, and a `/tmp` of its own, empty at each start, which holds `HOME` (`/tmp/home`).",
		[]probeCheck{{"working directory", "its worker's directory", "its worker's directory"}, {"own directory", "writable", "writable"},
			{"HOME", "/tmp/home, 0 entries, writable", ""}, {"/tmp", "writable", "writable"}}},
	{"It reads the system read-only: `/usr`, `/bin`, `/lib*` and of `/etc` only what programs need (users and groups, name resolution, TLS roots, the dynamic linker's cache, the time zone), and besides that only the helix-org executable, its agent's program and what `agent.sandbox.paths` shares.",
		[]probeCheck{{"/usr", "read-only", ""}, {"/etc/passwd", "readable", "readable"}, {"TLS roots", "readable", "readable"},
			{"/etc/shadow", "absent", "present"}, {"shared path", "readable", "readable"}}},
	{"It cannot see the database, its key file, other workers' directories, the server's working directory or `HOME`, or the Docker socket.",
		[]probeCheck{{"database", "unreadable", "readable"}, {"key file", "unreadable", "readable"}, {"other worker's directory", "unreadable", "readable"},
			{"server's working directory", "unreadable", "readable"}, {"server's HOME", "unreadable", "readable"}, {"Docker socket", "absent", ""}}},
	{"It shares the server's network: it reaches its MCP endpoint and the model relay on loopback, and whatever else the host can reach.",
		[]probeCheck{{"MCP endpoint", "reached", "reached"}, {"model relay", "reached", "reached"}}},
}

// TestDocsStateWhatHostAgentsReach: docs/security.md's list of what a
// sandboxed host agent can reach is sandboxClaims, sentence for sentence,
// so neither changes without the other.
func TestDocsStateWhatHostAgentsReach(t *testing.T) {
	data, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(data), "<!-- host sandbox claims: one per line, each proven by cmd/helix-org/sandbox_test.go -->\n")
	if !ok {
		t.Fatal("docs/security.md has no host sandbox claims")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var readme, tested []string
	for _, line := range strings.Split(list, "\n") {
		readme = append(readme, strings.TrimPrefix(line, "- "))
	}
	for _, c := range sandboxClaims {
		tested = append(tested, c.sentence)
	}
	if !slices.Equal(readme, tested) {
		t.Errorf("docs/security.md's claims:\n%s\nthe tested ones:\n%s", strings.Join(readme, "\n"), strings.Join(tested, "\n"))
	}
}

// TestHostAgentsAreSandboxed runs two AI workers at once on each host
// runtime — command, Claude Code (a fake on PATH) and the built-in agent
// (its model, a fake provider behind the relay, has it run the probe with
// its bash tool) — each agent the probe. Each tries to read the other's
// environment, the server's, the database, the key file and the other
// worker's directory, and to reach its MCP endpoint and the relay; every
// sentence of docs/security.md on the sandbox is checked against what it found. With
// agent.sandbox off the same tries must succeed, and each run is warned.
func TestHostAgentsAreSandboxed(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := "HELIX_ORG_TEST_AGENT=probe exec " + exe
	for _, tt := range []struct {
		name, runtime string
		off           bool
	}{
		{"command", agent.RuntimeCommand, false},
		{"claude", agent.RuntimeClaude, false},
		{"builtin", agent.RuntimeBuiltin, false},
		{"command, sandbox off", agent.RuntimeCommand, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
				switch {
				case len(turn.Tools) == 0: // the probe's own call through the relay
					return llmtest.Reply{Text: "relayed"}
				case turn.CallsTo(agent.BashToolName) == 0:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(agent.BashToolName, map[string]any{"command": probe})}}
				}
				return llmtest.Reply{Text: "done"}
			})
			dir := t.TempDir()
			st, err := store.Open(t.Context(), filepath.Join(dir, "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			shared := t.TempDir()
			os.WriteFile(filepath.Join(shared, "shared.txt"), []byte("shared"), 0o600)
			settings := map[*domain.SettingSpec]string{&agent.RuntimeSetting: tt.runtime, &agent.ProviderSetting: llm.Anthropic, &agent.ModelSetting: "fake-model",
				&agent.BaseURLSetting: fake.BaseURL(), &agent.APIKeySetting: llmtest.APIKey, &agent.CommandSetting: probe,
				&agent.BashSetting: `{"all":true}`, &agent.SandboxPathsSetting: fmt.Sprintf(`{"ro":[%q]}`, shared)}
			if tt.off {
				settings[&agent.SandboxSetting] = agent.SandboxOff
			}
			setAll(t, st, settings)
			if tt.runtime == agent.RuntimeClaude {
				bin := t.TempDir()
				clitest.WriteExecutable(t, filepath.Join(bin, "claude"), "#!/bin/sh\n"+probe+" \"$@\"\n")
				t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			logs := &demoLogBuffer{}
			_, envs, owner := startServe(t, st, logs)
			call := func(name string, args map[string]any) { servertest.Call[map[string]any](t, owner, name, args) }
			call("create_role", map[string]any{"id": "r-probe", "title": "Probe", "content": "Probe."})
			call("create_position", map[string]any{"id": "p-probe", "role": "r-probe", "title": "Probe"})
			workers := []string{"w-a", "w-b"}
			for _, w := range workers {
				call("hire_worker", map[string]any{"id": w, "position": "p-probe", "kind": "ai", "name": w, "grants": []string{"read_events"}})
			}

			// A run's group counts once its processes are seen: a group read
			// from a run that has just ended (a start retried) has none.
			members := map[string][]int{}
			until(t, 60*time.Second, "both agents running", func() bool {
				for _, w := range workers {
					acts, _ := st.ListActivations(t.Context(), w)
					delete(members, w)
					if len(acts) == 1 && acts[0].Status == domain.ActivationRunning && acts[0].Process != nil {
						if m := groupMembers(acts[0].Process.PGID); len(m) > 0 {
							members[w] = m
						}
					}
				}
				return len(members) == 2
			}, func() string {
				var seen []string
				for _, w := range workers {
					acts, _ := st.ListActivations(t.Context(), w)
					for _, a := range acts {
						seen = append(seen, fmt.Sprintf("%s: %s %s, process %+v", w, a.ID, a.Status, a.Process))
					}
				}
				return strings.Join(seen, "\n") + "\nthe server's log:\n" + logs.String()
			})
			cwd, _ := os.Getwd()
			home, _ := os.UserHomeDir()
			ns := map[string]string{}
			for _, n := range probeNamespaces {
				ns[n], _ = os.Readlink("/proc/self/ns/" + n)
			}
			for i, w := range workers {
				other := workers[1-i]
				tg := probeTargets{OtherPIDs: members[other], ServerPID: os.Getpid(), ServerNS: ns, DB: st.Path(), Key: st.Path() + ".key",
					OtherDir: filepath.Join(envs, other), ServerDir: cwd, ServerHome: home, Shared: shared}
				data, _ := json.Marshal(tg)
				if err := os.WriteFile(filepath.Join(envs, w, "probe.json"), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// On a timeout, what each probe said so far names the try it
			// is stuck in.
			until(t, 60*time.Second, "both agents probed", func() bool {
				for _, w := range workers {
					if _, err := os.Stat(filepath.Join(envs, w, "probed")); err != nil {
						return false
					}
				}
				return true
			}, func() string {
				var b strings.Builder
				for _, w := range workers {
					fmt.Fprintf(&b, "%s's activation log so far:\n%s\n", w, logText(t, st, w))
				}
				return b.String() + "the server's log:\n" + logs.String()
			})
			for _, w := range workers {
				os.WriteFile(filepath.Join(envs, w, "release"), nil, 0o600)
			}
			waitIdle(t, st)

			for _, w := range workers {
				log := logText(t, st, w)
				if acts, _ := st.ListActivations(t.Context(), w); len(acts) != 1 || acts[0].Status != domain.ActivationSucceeded {
					t.Fatalf("%s's runs: %+v\n%s", w, acts, log)
				}
				for _, claim := range sandboxClaims {
					for _, c := range claim.checks {
						want := c.sandboxed
						if tt.off {
							want = c.off
						}
						got := probeLine(log, c.what)
						if want != "" && got != want || got == "" {
							t.Errorf("%s: %q\n  probe %s: %q, want %q", w, claim.sentence, c.what, got, want)
						}
					}
				}
				if warned := strings.Contains(log, "warning: agent.sandbox is off"); warned != tt.off {
					t.Errorf("%s's activation log warns of no sandbox: %v", w, warned)
				}
				if t.Failed() {
					t.Logf("%s's activation log:\n%s", w, log)
				}
			}
			if warned := strings.Count(logs.String(), "agent.sandbox is off: this agent runs unsandboxed"); tt.off && warned != 2 || !tt.off && warned != 0 {
				t.Errorf("the server log warns of %d unsandboxed runs:\n%s", warned, logs.String())
			}
		})
	}
}

// probeLine is what the probe said of what, on an activation log (as
// output, or inside the bash tool's result).
func probeLine(log, what string) string {
	m := regexp.MustCompile(`probe ` + regexp.QuoteMeta(what) + `: ([^\n"\\]*)`).FindStringSubmatch(log)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestHostRuntimesRefuseWithoutASandbox runs the real binary where
// bubblewrap cannot make a sandbox — itself in a sandbox that allows no
// further user namespaces. It says so at start; a command-runtime run
// fails before its agent starts, with the reason on its activation log,
// and is retried, then parked; with agent.sandbox off it runs, warned.
func TestHostRuntimesRefuseWithoutASandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, envs, addr := filepath.Join(dir, "helix-org.db"), filepath.Join(dir, "envs"), freeAddr(t)
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runsOrg(t, st)
	setAll(t, st, map[*domain.SettingSpec]string{&agent.RuntimeSetting: agent.RuntimeCommand, &agent.CommandSetting: "cat >/dev/null; echo ran",
		&dispatch.MaxStartAttemptsSetting: "2", &dispatch.StartBackoffSetting: "20ms", &dispatch.StartBackoffMaxSetting: "50ms"})
	os.MkdirAll(envs, 0o700)

	exe, _ := os.Executable()
	check := agent.CheckSandbox(t.Context(), "")
	if check.Err != nil {
		t.Fatal(check.Err)
	}
	srv := exec.Command(exe, "serve", "--addr", addr, "--db", db, "--envs-dir", envs)
	srv.Env = append(os.Environ(), "HELIX_ORG_TEST_MAIN=1")
	logs := &demoLogBuffer{}
	srv.Stdout, srv.Stderr = logs, logs
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := (&agent.Bwrap{Path: check.Bwrap, Exe: exe, Paths: agent.SandboxPaths{Writable: []string{dir}}}).Wrap(srv, dir); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); srv.Wait() })
	waitHealthy(t, addr)
	// The check runs beside the start, so its line may come after the
	// server first answers, and through a pipe exec copies on its own
	// goroutine.
	until(t, 10*time.Second, "the server log's sandbox error", func() bool {
		return strings.Contains(logs.String(), "agent.sandbox off")
	})
	wantAll(t, "server log", logs.String(), "host agents cannot be sandboxed", "could not start a sandbox", "agent.sandbox off")

	hireAI(t, st, "w-reader")
	trigger := func() domain.QueuedTrigger {
		qs, err := st.ListTriggers(t.Context(), store.TriggerQuery{Worker: "w-reader"})
		if err != nil || len(qs) != 1 {
			t.Fatalf("triggers = %+v, %v", qs, err)
		}
		return qs[0]
	}
	until(t, 30*time.Second, "the trigger parked", func() bool { return trigger().Status == domain.TriggerParked })
	wantAll(t, "activation log", logText(t, st, "w-reader"),
		"exit: failed: did not start: host agents run only in a bubblewrap sandbox, and it cannot run here (",
		"`helix-org config set agent.sandbox off`", "parked: trigger(s) 1 parked: the agent failed to start 2 time(s)")
	if strings.Contains(logText(t, st, "w-reader"), "output: ran") {
		t.Error("an agent ran without a sandbox")
	}

	if err := st.SetSetting(t.Context(), agent.SandboxSetting, agent.SandboxOff); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReleaseTriggers(t.Context(), store.TriggerSelection{Worker: "w-reader"}); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the released trigger done", func() bool { return trigger().Status == domain.TriggerDone })
	wantAll(t, "activation log", logText(t, st, "w-reader"), "note: warning: agent.sandbox is off: this agent runs unsandboxed as the server's user", "output: ran", "exit: succeeded")
	until(t, 10*time.Second, "the server log's warning", func() bool {
		return strings.Contains(logs.String(), "agent.sandbox is off: this agent runs unsandboxed")
	})
}

// TestAgentKilledThroughAShellRunsAgain: an agent that `sh -c` did not
// exec (`X=1 sleep 60`), killed from outside with kill -9 — found in the
// run's recorded process group — exits 137 through the shell; its run
// fails as killed and its trigger runs again, in the sandbox and off it.
func TestAgentKilledThroughAShellRunsAgain(t *testing.T) {
	for _, tt := range []struct {
		name, sandbox string
	}{{"sandboxed", agent.SandboxBwrap}, {"unsandboxed", agent.SandboxOff}} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "helix-org.db"), store.Options{Transports: transports.Specs(), Synchronous: "NORMAL"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			// The first run marks its directory and sleeps; the second finds the mark.
			setAll(t, st, map[*domain.SettingSpec]string{&agent.RuntimeSetting: agent.RuntimeCommand, &agent.SandboxSetting: tt.sandbox,
				&agent.CommandSetting:         `cat >/dev/null; if [ -e ran ]; then echo again; exit 0; fi; touch ran; X=1 sleep 60`,
				&dispatch.StartBackoffSetting: "20ms"})
			startServe(t, st, io.Discard)
			st.CreateRole(t.Context(), "w-owner", domain.Role{ID: "r-reader", Title: "Reader", Content: "Read."})
			st.CreatePosition(t.Context(), "w-owner", domain.Position{ID: "p-reader", RoleID: "r-reader", Title: "Reader"})
			hireAI(t, st, "w-sleeper")
			var first domain.Activation
			until(t, 30*time.Second, "the first run's sleep", func() bool {
				acts, _ := st.ListActivations(t.Context(), "w-sleeper")
				if len(acts) != 1 || acts[0].Process == nil {
					return false
				}
				first = acts[0]
				return sleeperOf(first.Process.PGID) != 0
			})
			if err := syscall.Kill(sleeperOf(first.Process.PGID), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitIdle(t, st)
			acts, _ := st.ListActivations(t.Context(), "w-sleeper")
			if i := slices.IndexFunc(acts, func(a domain.Activation) bool { return a.ID == first.ID }); len(acts) != 2 || i < 0 ||
				acts[i].Status != domain.ActivationFailed || acts[i].Error != "agent process died: killed by a signal" ||
				acts[1-i].Status != domain.ActivationSucceeded || !slices.Equal(acts[1-i].TriggerIDs, first.TriggerIDs) {
				t.Fatalf("runs = %+v; want the killed one failed and its trigger run again", acts)
			}
			wantAll(t, "activation log", logText(t, st, "w-sleeper"), "retry: the agent process died (attempt 1 of 5)", "output: again")
		})
	}
}

// sleeperOf is the `sleep` in a process group, or 0.
func sleeperOf(pgid int) int {
	for _, pid := range groupMembers(pgid) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "sleep" {
			return pid
		}
	}
	return 0
}
