package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
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
		os.Exit(m.Run())
	case "echo":
		os.Exit(echoAgent())
	case "slow":
		os.Exit(slowAgent())
	case "claude":
		os.Exit(fakeClaude())
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
	url, tok, err := domain.ReadMCPConfig(data)
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

// fakeClaude records its arguments, one line per run, in $FAKE_CLAUDE_LOG.
func fakeClaude() int {
	f, err := os.OpenFile(os.Getenv("FAKE_CLAUDE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 1
	}
	defer f.Close()
	wd, _ := os.Getwd()
	fmt.Fprintf(f, "cwd=%s args=%s\n", wd, strings.Join(os.Args[1:], " "))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
	}
	return 0
}
