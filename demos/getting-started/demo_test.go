// Package gettingstarted_test runs demos/getting-started/README.md: its
// shell blocks, in order, with the helix-org binary built from this tree,
// against a fake LLM provider in place of the reader's real one.
package gettingstarted_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/server/servertest"
)

// exe is the helix-org binary TestMain builds.
var exe string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "demo-client" {
		os.Exit(client(os.Args[2:]))
	}
	dir, err := os.MkdirTemp("", "helix-org-demo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exe = filepath.Join(dir, "helix-org")
	build := exec.Command("go", "build", "-o", exe, "github.com/helixml/helix-org/cmd/helix-org")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build helix-org:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// block is one fenced shell block of the README, with its demo marker.
type block struct {
	kind, text string
}

var marked = regexp.MustCompile("(?s)<!-- demo: (\\S+) -->\n```sh\n(.*?)```")

func readme(t *testing.T) []block {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	for _, m := range marked.FindAllStringSubmatch(string(data), -1) {
		out = append(out, block{kind: m[1], text: m[2]})
	}
	return out
}

func TestREADME(t *testing.T) {
	blocks := readme(t)
	// "none" is the offline path: no model, the example agent.
	for _, format := range []string{llm.Anthropic, llm.OpenAI, "none"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			// The OpenAI run always uses the stand-in helpers, so both paths
			// are tested wherever curl and jq are installed.
			runREADME(t, blocks, format, format != llm.Anthropic || !haveCurlAndJQ())
		})
	}
}

func haveCurlAndJQ() bool {
	_, errCurl := exec.LookPath("curl")
	_, errJQ := exec.LookPath("jq")
	return errCurl == nil && errJQ == nil
}

// runREADME follows the README as a newcomer would, choosing the provider
// option that matches format and pointing it at a fake; format "none"
// takes the offline option, with no model.
func runREADME(t *testing.T, blocks []block, format string, standIn bool) {
	offline := format == "none"
	fakeFormat := format
	if offline {
		fakeFormat = llm.Anthropic // never called
	}
	fake := llmtest.New(t, fakeFormat, llmtest.FollowRole)
	work := t.TempDir()
	os.Mkdir(filepath.Join(work, "bin"), 0o755)
	if err := os.Symlink(exe, filepath.Join(work, "bin", "helix-org")); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "HELIX_ORG_ADDR=" + addr, "ANTHROPIC_API_KEY=" + llmtest.APIKey}

	var before, after strings.Builder
	var serve string
	last := blocks[len(blocks)-1]
	if last.kind != "calls" || strings.TrimSpace(last.text) != "bin/helix-org activations" {
		t.Fatalf("the README should end with the activations block, not %q", last.text)
	}
	for _, b := range blocks[:len(blocks)-1] {
		text := strings.ReplaceAll(b.text, "127.0.0.1:8080", addr)
		switch {
		case b.kind == "setup":
			before.WriteString(dropLines(text, "make build"))
		case b.kind == "provider-"+format && offline:
			before.WriteString(text)
		case b.kind == "provider-"+format:
			before.WriteString(provider(format, text, fake.BaseURL()))
		case strings.HasPrefix(b.kind, "provider-"):
		case b.kind == "serve":
			serve = strings.TrimSpace(text)
		case b.kind == "helpers" && standIn:
			after.WriteString(standInHelpers())
		case b.kind == "helpers", b.kind == "calls":
			after.WriteString(text)
		default:
			t.Fatalf("README block of unknown kind %q", b.kind)
		}
	}
	bash(t, work, env, before.String())
	if serve != "bin/helix-org serve" {
		t.Fatalf("the serve block is %q", serve)
	}
	startServe(t, work, env)
	out := bash(t, work, env, after.String())
	// A reply lands before its activation has finished; a reader takes
	// longer to type the next command than the test does.
	log := waitForActivations(t, work, env, "http://"+addr+"/workers/w-owner/mcp", 3)
	out += bash(t, work, env, last.text)

	if want := `tool_call: {"body":"echo: hello","inReplyTo":"e-`; !strings.Contains(log, want) {
		t.Errorf("w-echo's activation log lacks %q:\n%s", want, log)
	}
	wants := []string{
		"w-echo: echo: hello",
		"start: activation a-",
		"exit: succeeded",
		"w-echo: loud: HELLO",
		"w-echo  3            0       500        50          550", // hire + two messages: 5 model calls
	}
	turns := 5
	if offline {
		wants[len(wants)-1] = "w-echo  3            0       0          0           0"
		turns = 0
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("the README's commands printed no %q:\n%s", want, out)
		}
	}
	if len(fake.Turns()) != turns {
		t.Errorf("the fake provider got %d requests, want %d", len(fake.Turns()), turns)
	}
}

// provider adapts the README's provider block to the fake: Option A gets
// the fake's URL, Option B swaps Ollama for the fake (which wants a key).
func provider(format, text, baseURL string) string {
	if format == llm.Anthropic {
		return text + "bin/helix-org config set agent.base_url " + baseURL + "\n"
	}
	text = dropLines(text, "ollama ")
	text = strings.ReplaceAll(text, "http://127.0.0.1:11434/v1", baseURL)
	return text + "printf %s " + llmtest.APIKey + " | bin/helix-org config set agent.api_key -\n"
}

func dropLines(text, prefix string) string {
	var keep []string
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(line, prefix) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// bash runs a script as the reader's shell would, failing on any error.
func bash(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\nscript:\n%s\noutput:\n%s", err, script, out.String())
	}
	return out.String()
}

// startServe runs `bin/helix-org serve` until the test ends, returning once
// it is listening (it logs "helix-org serving" after binding).
func startServe(t *testing.T, dir string, env []string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "bin", "helix-org"), "serve")
	cmd.Dir, cmd.Env = dir, env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs servertest.Logs
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			io.WriteString(&logs, sc.Text()+"\n")
			if strings.Contains(sc.Text(), "helix-org serving") {
				close(ready)
				break
			}
		}
		io.Copy(&logs, stderr)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	})
	select {
	case <-ready:
	case err := <-exited:
		exited <- err
		t.Fatalf("serve exited: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve not listening after 30s:\n%s", logs.String())
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// standInHelpers defines the README's helpers without curl or jq, by
// calling this test binary, which does what they do (see client).
func standInHelpers() string {
	self, _ := os.Executable()
	var b strings.Builder
	for _, name := range []string{"mcp", "say", "agentlog"} {
		// A -race binary otherwise sleeps a second on exit.
		fmt.Fprintf(&b, "%s() { GORACE=atexit_sleep_ms=0 %q demo-client \"$URL\" \"$TOKEN\" %s \"$@\"; }\n", name, self, name)
	}
	return b.String()
}

// waitForActivations long-polls w-echo's activation log until n runs
// have ended, and returns the log as agentlog prints it.
func waitForActivations(t *testing.T, dir string, env []string, url string, n int) string {
	t.Helper()
	tok := regexp.MustCompile(`(?m)^Token:\s+(\S+)`).FindStringSubmatch(bash(t, dir, env, "bin/helix-org token create w-owner"))
	if tok == nil {
		t.Fatal("token create printed no token")
	}
	deadline := time.Now().Add(60 * time.Second)
	var since any = 0
	var log strings.Builder
	for ended := 0; ended < n; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d activations ended within 60s", ended, n)
		}
		out, err := rpc(url, tok[1], "worker_log", json.RawMessage(fmt.Sprintf(`{"worker": "w-echo", "since": %v, "wait": 10}`, since)))
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := out["events"].([]any)
		for _, e := range evs {
			msg, _ := e.(map[string]any)["message"].(map[string]any)
			fmt.Fprintf(&log, "%v: %v\n", msg["subject"], msg["body"])
			if msg["subject"] == "exit" {
				ended++
			}
		}
		since = out["cursor"]
	}
	return log.String()
}

// rpc calls a tool the way the README's mcp helper does, and returns what
// its jq filter prints: the structured result, else the result, else the
// JSON-RPC error.
func rpc(url, token, tool string, arguments json.RawMessage) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": arguments}})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if sc, ok := out.Result["structuredContent"].(map[string]any); ok {
		return sc, nil
	}
	if out.Result != nil {
		return out.Result, nil
	}
	return out.Error, nil
}

// client is the stand-in for the README's helpers: the same JSON-RPC
// request the curl line sends, the same output its jq filters print.
func client(args []string) int {
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: demo-client <url> <token> mcp|say|agentlog <args>")
		return 2
	}
	url, token, helper, rest := args[0], args[1], args[2], args[3:]
	call := func(tool string, arguments json.RawMessage) (map[string]any, error) {
		return rpc(url, token, tool, arguments)
	}
	events := func(v map[string]any, line func(ev map[string]any) string) {
		list, _ := v["events"].([]any)
		for _, e := range list {
			ev, _ := e.(map[string]any)
			fmt.Println(line(ev))
		}
	}
	msg := func(ev map[string]any, key string) any { m, _ := ev["message"].(map[string]any); return m[key] }
	var err error
	switch helper {
	case "mcp":
		var v map[string]any
		if v, err = call(rest[0], json.RawMessage(rest[1])); err == nil {
			out, _ := json.MarshalIndent(v, "", "  ")
			fmt.Println(string(out))
		}
	case "say":
		pub, _ := json.Marshal(map[string]string{"stream": "s-inbox", "body": rest[0]})
		var ev, read map[string]any
		if ev, err = call("publish", pub); err == nil {
			q := fmt.Sprintf(`{"streams": ["s-inbox"], "since": %v, "wait": 60}`, ev["seq"])
			if read, err = call("read_events", json.RawMessage(q)); err == nil {
				events(read, func(ev map[string]any) string { return fmt.Sprintf("%v: %v", ev["source"], msg(ev, "body")) })
			}
		}
	case "agentlog":
		var v map[string]any
		if v, err = call("worker_log", json.RawMessage(fmt.Sprintf(`{"worker": %q}`, rest[0]))); err == nil {
			events(v, func(ev map[string]any) string { return fmt.Sprintf("%v: %v", msg(ev, "subject"), msg(ev, "body")) })
		}
	default:
		err = fmt.Errorf("unknown helper %q", helper)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
