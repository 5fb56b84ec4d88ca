package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent/kubernetes/kubetest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestMain lets the test binary stand in for other programs, as go-sdk's
// cmd tests do: the real helix-org binary (HELIX_ORG_TEST_MAIN=1), or a
// scripted agent or fake Claude Code (HELIX_ORG_TEST_AGENT=<mode>).
func TestMain(m *testing.M) {
	if os.Getenv("HELIX_ORG_TEST_MAIN") == "1" || slices.Equal(os.Args[1:min(3, len(os.Args))], []string{"agent", "run"}) {
		// The builtin runtime runs os.Executable() as `agent run`, with an
		// allow-listed environment: here that is this test binary.
		main()
		os.Exit(0)
	}
	switch os.Getenv("HELIX_ORG_TEST_AGENT") {
	case "":
		code := m.Run()
		uitest.Close()  // the shared browser
		kubetest.Stop() // the shared control plane
		os.Exit(code)

	case "echo":
		os.Exit(echoAgent())
	case "slow":
		os.Exit(slowAgent())
	case "claude":
		os.Exit(fakeClaude())
	case "relay":
		os.Exit(relayAgent())
	case "claude-relay":
		os.Exit(relayClaude())
	case "claude-steered":
		os.Exit(steeredClaude())
	case "stubborn":
		os.Exit(stubbornAgent())
	case "probe":
		os.Exit(probeAgent())
	case "github-dump":
		os.Exit(githubDumpAgent())
	default:
		fmt.Fprintln(os.Stderr, "unknown HELIX_ORG_TEST_AGENT")
		os.Exit(2)
	}
}

// trigger is one event trigger parsed back out of a rendered prompt.
type trigger struct {
	event, stream, body string
}

var triggerLine = regexp.MustCompile(`^\[\d+/\d+\] event (\S+) on stream (\S+) `)

// parsePrompt reads the event triggers out of a prompt as an agent would.
func parsePrompt(prompt string) []trigger {
	var out []trigger
	var cur *trigger
	inBody := false
	for _, line := range strings.Split(prompt, "\n") {
		if m := triggerLine.FindStringSubmatch(line); m != nil {
			out = append(out, trigger{event: m[1], stream: m[2]})
			cur, inBody = &out[len(out)-1], false
			continue
		}
		if strings.HasPrefix(line, "[") {
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		if line == "  body:" {
			inBody = true
			continue
		}
		if inBody && strings.HasPrefix(line, "    ") {
			if cur.body != "" {
				cur.body += "\n"
			}
			cur.body += strings.TrimPrefix(line, "    ")
		}
	}
	return out
}

// connectFromEnv connects to the MCP endpoint named in ./mcp.json.
func connectFromEnv(ctx context.Context) (*mcp.ClientSession, string, string, error) {
	data, err := os.ReadFile("mcp.json")
	if err != nil {
		return nil, "", "", err
	}
	url, tok, err := domain.ReadMCPConfig(data, os.Getenv)
	if err != nil {
		return nil, "", "", err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: servertest.BearerTransport{Token: tok}}}, nil)
	return cs, url, tok, err
}

var template = regexp.MustCompile("`([^`]*<(?:body|BODY[^>]*)>[^`]*)`")

// echoAgent does what role.md says: reply with its backticked template,
// <body> as is or <BODY…> upper-cased, on the trigger's stream.
func echoAgent() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompt, _ := io.ReadAll(os.Stdin)
	role, err := os.ReadFile("role.md")
	if err != nil {
		fmt.Println("no role.md:", err)
		return 1
	}
	m := template.FindStringSubmatch(string(role))
	if m == nil {
		fmt.Println("role.md has no reply template")
		return 1
	}
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	fmt.Println("env:", strings.Join(names, " "))
	cs, url, tok, err := connectFromEnv(ctx)
	if err != nil {
		fmt.Println("connect:", err)
		return 1
	}
	defer cs.Close()
	if f := os.Getenv("HELIX_ORG_TEST_TOKEN_FILE"); f != "" {
		os.WriteFile(f, []byte(tok), 0o600)
	}
	fmt.Println("cross-worker probe:", probe(strings.Replace(url, "/workers/"+os.Getenv("HELIX_ORG_WORKER")+"/", "/workers/w-owner/", 1), tok))
	for _, t := range parsePrompt(string(prompt)) {
		reply := strings.NewReplacer("<body>", t.body).Replace(m[1])
		reply = regexp.MustCompile(`<BODY[^>]*>`).ReplaceAllString(reply, strings.ToUpper(t.body))
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "publish", Arguments: map[string]any{"stream": t.stream, "body": reply, "inReplyTo": t.event}})
		if err != nil || res.IsError {
			fmt.Println("publish failed:", err, servertest.Text(res))
			return 1
		}
		fmt.Println("replied:", reply)
	}
	return 0
}

// probe reports the HTTP status of an MCP initialize at url with tok.
func probe(url, tok string) int {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// slowAgent records the events it was given, waits for a release file in
// the envs dir (or 60s), then records them as done.
func slowAgent() int {
	prompt, _ := io.ReadAll(os.Stdin)
	var ids []string
	for _, t := range parsePrompt(string(prompt)) {
		ids = append(ids, t.event)
	}
	act := os.Getenv("HELIX_ORG_ACTIVATION")
	logf := func(state string) {
		f, err := os.OpenFile("../handled.log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(f, "%s %s %s\n", state, act, strings.Join(ids, ","))
		f.Sync()
		f.Close()
	}
	logf("start")
	parent := os.Getppid()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if os.Getppid() != parent {
			logf("orphaned") // the server was killed under us
			return 3
		}
		if _, err := os.Stat("../release"); err == nil {
			logf("done")
			return 0
		}
		time.Sleep(20 * time.Millisecond) // polling a file another process creates
	}
	return 1
}

// fakeClaude records its arguments, one line per run, in $FAKE_CLAUDE_LOG,
// and says on stdout, as a stream-json assistant message, what it read on
// stdin: its size, the event triggers in it, and a digest of their bodies.
func fakeClaude() int {
	f, err := os.OpenFile(os.Getenv("FAKE_CLAUDE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 1
	}
	defer f.Close()
	wd, _ := os.Getwd()
	fmt.Fprintf(f, "cwd=%s token=%s args=%s\n", wd, os.Getenv("HELIX_ORG_TOKEN"), strings.Join(os.Args[1:], " "))
	stdin := readPrompt()
	trigs := parsePrompt(string(stdin))
	msg := map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{{"type": "text", "text": promptDigest(len(stdin), trigs)}}}}
	json.NewEncoder(os.Stdout).Encode(msg)
	return 0
}

// relayCall makes one model call as any Anthropic client would, from the
// variables every run gets: ANTHROPIC_BASE_URL (the server's relay) and
// ANTHROPIC_API_KEY (the run's token). It returns the reply's body.
func relayCall(ctx context.Context, stream bool) (string, error) {
	body := fmt.Sprintf(`{"model":"fake-model","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"hello"}]}`, stream)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("relay: %d %s", resp.StatusCode, reply)
	}
	return string(reply), err
}

// relayAgent is a command-runtime agent that calls its model through the
// relay once and prints the reply.
func relayAgent() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	io.ReadAll(os.Stdin)
	reply, err := relayCall(ctx, false)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("model said:", reply)
	return 0
}

// relayClaude stands in for Claude Code: it reads mcp.json, expanding
// ${HELIX_ORG_TOKEN} from its environment as Claude Code does, lists its
// tools over MCP, streams one model call through the relay, and prints
// stream-json whose result reports no usage, so any tokens on the
// activation come from the relay's ledger.
func relayClaude() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	readPrompt()
	say := func(typ, text string) {
		b, _ := json.Marshal(map[string]any{"type": typ, "message": map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}})
		fmt.Println(string(b))
	}
	if !slices.Contains(os.Args, "--mcp-config") {
		say("assistant", "no --mcp-config")
		return 1
	}
	cs, _, _, err := connectFromEnv(ctx)
	if err != nil {
		say("assistant", "connect: "+err.Error())
		return 1
	}
	tools, err := cs.ListTools(ctx, nil)
	cs.Close()
	if err != nil {
		say("assistant", "list tools: "+err.Error())
		return 1
	}
	reply, err := relayCall(ctx, true)
	if err != nil || !strings.Contains(reply, "event: message_stop") {
		say("assistant", fmt.Sprintf("stream: %v %s", err, reply))
		return 1
	}
	say("assistant", fmt.Sprintf("streamed through the relay with %d MCP tools", len(tools.Tools)))
	fmt.Println(`{"type":"result","subtype":"success","is_error":false,"result":"done"}`)
	return 0
}

// readPrompt reads the prompt as the agent it fakes gets it: Claude
// Code's (`--input-format stream-json`) is the first line of its stdin, a
// user message, after which stdin stays open for the messages sent to the
// run; any other agent's is all of stdin.
func readPrompt() []byte {
	if i := slices.Index(os.Args, "--input-format"); i < 0 || i+1 == len(os.Args) || os.Args[i+1] != "stream-json" {
		b, _ := io.ReadAll(os.Stdin)
		return b
	}
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	var m struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	json.Unmarshal([]byte(line), &m)
	return []byte(m.Message.Content)
}

// promptDigest is what fakeClaude reports about a prompt.
func promptDigest(size int, trigs []trigger) string {
	var bodies []string
	for _, t := range trigs {
		bodies = append(bodies, t.body)
	}
	return fmt.Sprintf("read %d bytes on stdin: %s", size, bodiesDigest(bodies))
}

// bodiesDigest names event bodies by count, total size and hash.
func bodiesDigest(bodies []string) string {
	h := sha256.New()
	n := 0
	for _, b := range bodies {
		io.WriteString(h, b+"\x00")
		n += len(b)
	}
	return fmt.Sprintf("%d event trigger(s), bodies %d bytes, sha256 %x", len(bodies), n, h.Sum(nil))
}

// stubbornAgent outlives its server: it notes which earlier agents are
// still alive as it starts — each holds a lock on its file in ../pids, which
// the kernel drops when it dies, a test that works across pid namespaces —
// takes its own, and runs until a release file appears in the envs dir.
func stubbornAgent() int {
	io.ReadAll(os.Stdin)
	os.MkdirAll("../pids", 0o700)
	var alive []string
	entries, _ := os.ReadDir("../pids")
	for _, e := range entries {
		if locked(filepath.Join("../pids", e.Name())) {
			alive = append(alive, e.Name())
		}
	}
	act := os.Getenv("HELIX_ORG_ACTIVATION")
	lock, err := os.OpenFile(filepath.Join("../pids", act), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil || syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) != nil {
		return 1
	}
	defer lock.Close()
	f, err := os.OpenFile("../order.log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 1
	}
	fmt.Fprintf(f, "start %s alive=%s\n", act, strings.Join(alive, ","))
	f.Close()
	for {
		if _, err := os.Stat("../release"); err == nil {
			return 0
		}
		time.Sleep(20 * time.Millisecond) // polling a file another process creates
	}
}

// locked reports whether a live process holds path's lock.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// processAlive reports whether pid runs; a zombie is dead.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
}
