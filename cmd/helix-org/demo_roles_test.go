package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/clitest"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// roleRule is one "When …" line of a demo's role file, as the scripted
// model reads it: which triggers it answers and what it publishes.
type roleRule struct {
	stream          string // the trigger's stream
	other           bool   // "any other …": only when no other rule of the stream matched
	outside         bool   // "an email …": only what came from outside, never a worker's message
	from, is, word  string // conditions: sender, whole body, a word in the body
	out             string // the stream to publish on; empty: the same thread
	to, subject     string
	template        string
	needsThreadRoot bool
}

var (
	ruleLine = regexp.MustCompile("(?i)^(?:- )?when (.*?) on `(s-[a-z0-9-]+)`(.*?), (publish .*?): `([^`]*)`")
	ruleCond = regexp.MustCompile("(?i)(from|is|mentions) `([^`]*)`")
	ruleOut  = regexp.MustCompile("(?i)publish on `(s-[a-z0-9-]+)`")
	ruleTo   = regexp.MustCompile("(?i) to `([^`]*)`")
	ruleSubj = regexp.MustCompile("(?i) with subject `([^`]*)`")
	roleFile = regexp.MustCompile(`(?s)<file name="role.md">\n(.*?)</file>`)
)

// roleRules reads the rules out of the role.md the built-in agent puts in
// its system prompt.
func roleRules(system string) []roleRule {
	m := roleFile.FindStringSubmatch(system)
	if m == nil {
		return nil
	}
	var rules []roleRule
	for _, line := range strings.Split(m[1], "\n") {
		r := ruleLine.FindStringSubmatch(strings.TrimSpace(line))
		if r == nil {
			continue
		}
		what := " " + strings.ToLower(r[1]) + " "
		rule := roleRule{stream: r[2], other: strings.Contains(what, " other "), outside: strings.Contains(what, " email "),
			template: r[5], needsThreadRoot: strings.Contains(r[5], "<thread>")}
		for _, c := range ruleCond.FindAllStringSubmatch(r[3], -1) {
			switch strings.ToLower(c[1]) {
			case "from":
				rule.from = c[2]
			case "is":
				rule.is = c[2]
			case "mentions":
				rule.word = c[2]
			}
		}
		if o := ruleOut.FindStringSubmatch(r[4]); o != nil {
			rule.out = o[1]
		}
		if o := ruleTo.FindStringSubmatch(r[4]); o != nil {
			rule.to = o[1]
		}
		if o := ruleSubj.FindStringSubmatch(r[4]); o != nil {
			rule.subject = o[1]
		}
		rules = append(rules, rule)
	}
	return rules
}

func (r roleRule) matches(tr llmtest.Trigger) bool {
	body := strings.TrimSpace(tr.Body)
	words := strings.FieldsFunc(strings.ToLower(body), func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-')
	})
	return r.stream == tr.Stream && (r.from == "" || r.from == tr.From) && (!r.outside || tr.Source == "") &&
		(r.is == "" || strings.EqualFold(r.is, body)) && (r.word == "" || slices.Contains(words, strings.ToLower(r.word)))
}

// followRoles is the demos' scripted model: for each event trigger it
// applies the rules of the worker's role file ("an email" being a message
// from outside, never a worker's), publishing each matching rule's template — <body>, <from>, <subject>, and <thread> (the body of
// the thread's first message, which it reads first with read_events) —
// keeping the story on one thread; then it ends with text.
func followRoles(turn llmtest.Turn) llmtest.Reply {
	if turn.CallsTo("publish") > 0 {
		return llmtest.Reply{Text: "Done as my role says."}
	}
	rules := roleRules(turn.System)
	type step struct {
		rule roleRule
		tr   llmtest.Trigger
	}
	var steps []step
	var threadStreams []string
	for _, tr := range llmtest.Triggers(turn.Prompt()) {
		matched := false
		for _, pass := range []bool{false, true} {
			for _, r := range rules {
				if r.other == pass && (!pass || !matched) && r.matches(tr) {
					steps, matched = append(steps, step{r, tr}), true
					if r.needsThreadRoot && !slices.Contains(threadStreams, tr.Stream) {
						threadStreams = append(threadStreams, tr.Stream)
					}
				}
			}
		}
	}
	if len(steps) == 0 {
		return llmtest.Reply{Text: "Nothing in my role applies."}
	}
	if len(threadStreams) > 0 && turn.CallsTo("read_events") == 0 {
		return llmtest.Reply{Text: "Reading the thread first.", ToolCalls: []llm.ToolCall{llmtest.Call("read_events", map[string]any{"streams": threadStreams})}}
	}
	var read struct{ Events []domain.Event }
	if res := turn.Results(); len(res) > 0 {
		json.Unmarshal([]byte(res[0].Content), &read)
	}
	var calls []llm.ToolCall
	for _, s := range steps {
		calls = append(calls, llmtest.Call("publish", s.rule.args(s.tr, read.Events)))
	}
	return llmtest.Reply{Text: "Acting on my role.", ToolCalls: calls}
}

// args are the publish arguments of the rule for the trigger.
func (r roleRule) args(tr llmtest.Trigger, read []domain.Event) map[string]any {
	thread := tr.ThreadID
	if thread == "" {
		thread = tr.Event
	}
	root := ""
	for _, ev := range read {
		if ev.StreamID == tr.Stream && (ev.Message.MessageID == thread || ev.ID == thread) {
			root = ev.Message.Body
		}
	}
	body := strings.NewReplacer("<body>", tr.Body, "<from>", tr.From, "<subject>", tr.Subject, "<thread>", root).Replace(r.template)
	args := map[string]any{"stream": r.out, "body": body, "threadId": thread}
	if r.out == "" || r.out == tr.Stream {
		args["stream"], args["inReplyTo"] = tr.Stream, tr.Event
	}
	if r.to != "" {
		args["to"] = strings.Split(r.to, ",")
	}
	if r.subject != "" {
		args["subject"] = strings.ReplaceAll(r.subject, "<subject>", tr.Subject)
	}
	return args
}

// TestRoleRules pins how the scripted model reads role lines, so a demo
// role edited into a form it no longer follows fails here first.
func TestRoleRules(t *testing.T) {
	sys := "<file name=\"role.md\">\n# Bot\n\n" +
		"- When a report on `s-floor` mentions `failed`, publish in the same thread: `Holding: <body>`\n" +
		"- When a reply on `s-floor` from `U0SUPER` is `approve`, publish on `s-line` to `a@x.com` with subject `Re <subject>`: `RELEASE <thread>`\n" +
		"- When any other message arrives on `s-floor`, publish in the same thread: `Noted.`\n" +
		"- When an email on `s-floor` mentions `help`, publish in the same thread: `On it.`\n" +
		"Prose is ignored.\n</file>"
	rules := roleRules(sys)
	want := []roleRule{
		{stream: "s-floor", word: "failed", template: "Holding: <body>"},
		{stream: "s-floor", from: "U0SUPER", is: "approve", out: "s-line", to: "a@x.com", subject: "Re <subject>", template: "RELEASE <thread>", needsThreadRoot: true},
		{stream: "s-floor", other: true, template: "Noted."},
		{stream: "s-floor", outside: true, word: "help", template: "On it."},
	}
	if len(rules) != len(want) {
		t.Fatalf("read %d rules, want %d: %+v", len(rules), len(want), rules)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, rules[i], want[i])
		}
	}
	for _, c := range []struct {
		tr   llmtest.Trigger
		want []bool
	}{
		{llmtest.Trigger{Stream: "s-floor", Body: "3 units FAILED torque"}, []bool{true, false, true, false}},
		{llmtest.Trigger{Stream: "s-floor", Body: " Approve ", From: "U0SUPER"}, []bool{false, true, true, false}},
		{llmtest.Trigger{Stream: "s-floor", Body: "approve", From: "U0LEAD"}, []bool{false, false, true, false}},
		{llmtest.Trigger{Stream: "s-line", Body: "failed"}, []bool{false, false, false, false}},
		{llmtest.Trigger{Stream: "s-floor", Body: "help, please"}, []bool{false, false, true, true}},
		{llmtest.Trigger{Stream: "s-floor", Body: "help, please", Source: "w-sam"}, []bool{false, false, true, false}},
	} {
		for i, r := range rules {
			if got := r.matches(c.tr); got != c.want[i] {
				t.Errorf("rule %d matches %+v = %v", i, c.tr, got)
			}
		}
	}
}

// runSetup runs a demo's setup.sh as the README has you run it, with
// HELIX_ORG a recorder of its command lines, then runs each recorded
// `helix-org …` line in-process against the served org at base, as the
// owner: the same commands, without a process per call. Then it runs it
// again, as someone might: that must succeed and change nothing in the
// org (no change on s-org).
func runSetup(t *testing.T, st *store.Store, base, demo string, env ...string) {
	t.Helper()
	setupOnce(t, st, base, demo, env...)
	before := len(demoEvents(t, st, domain.StreamOrg))
	setupOnce(t, st, base, demo, env...)
	if after := demoEvents(t, st, domain.StreamOrg); len(after) != before {
		t.Fatalf("demos/%s/setup.sh run again changed the org: %d changes, the last %s", demo, len(after)-before, after[len(after)-1].Message.Body)
	}
}

func setupOnce(t *testing.T, st *store.Store, base, demo string, env ...string) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "helix-org")
	clitest.WriteExecutable(t, rec, "#!/bin/sh\nprintf '%s\\0' \"$#\" \"$@\" >> \"$0.calls\"\n")
	cmd := exec.CommandContext(t.Context(), "sh", filepath.Join("..", "..", "demos", demo, "setup.sh"))
	cmd.Env = append(append(os.Environ(), env...), "HELIX_ORG="+rec)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demos/%s/setup.sh: %v\n%s", demo, err, out)
	}
	data, err := os.ReadFile(rec + ".calls")
	if err != nil {
		t.Fatal(err)
	}
	tok := servertest.Token(t, st, domain.OwnerWorker)
	words := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	for len(words) > 0 {
		n, _ := strconv.Atoi(words[0])
		args := slices.Clone(words[1 : n+1])
		words = words[n+1:]
		if args[0] != "call" {
			t.Fatalf("demos/%s/setup.sh runs helix-org %s; a demo's setup only calls tools", demo, args[0])
		}
		// The call command alone: newRootCmd writes a package variable the
		// servers of parallel tests read.
		cmd := newCallCmd()
		var out bytes.Buffer
		cmd.SetArgs(append(args[1:], "--url", base, "--token", tok))
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		if err := cmd.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("demos/%s/setup.sh: helix-org %s: %v\n%s", demo, strings.Join(args, " "), err, out.String())
		}
	}
}

// demoTrace logs every worker's activation log when the test failed.
func demoTrace(t *testing.T, st *store.Store, workers ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, w := range workers {
			evs, _ := st.ReadEvents(context.Background(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + w}})
			for _, ev := range evs {
				t.Logf("%s: %s: %s", w, ev.Message.Subject, ev.Message.Body)
			}
		}
	})
}

// promptedWith reports whether worker was ever woken by the event: what
// the model was shown, as the fake provider received it.
func promptedWith(fake *llmtest.Server, worker, event string) bool {
	for _, turn := range fake.Turns() {
		if strings.Contains(turn.System, "Worker id: "+worker+"\n") && strings.Contains(turn.Prompt(), "event "+event+" ") {
			return true
		}
	}
	return false
}
