package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/store"
)

// serveURL runs the real serve wiring on loopback over the database at db
// and returns its base URL.
func serveURL(t *testing.T, db string) string {
	t.Helper()
	st, err := store.Open(t.Context(), db, store.Options{Transports: transports.Specs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base, _, _ := startServe(t, st, io.Discard)
	return base
}

var sessionLine = regexp.MustCompile(`session ([0-9a-f-]{36})`)

// TestChatBuiltinKeepsHistory: without Claude Code, chat talks to the
// configured provider as the worker: two turns (one using a tool), exit;
// --resume continues the same conversation, so the third turn's request
// carries the first two; --new starts afresh — for each wire format.
func TestChatBuiltinKeepsHistory(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no claude
	for _, format := range llmFormats {
		t.Run(format, func(t *testing.T) {
			fake := llmtest.New(t, format, func(turn llmtest.Turn) llmtest.Reply {
				last := turn.Last()
				if last.Text == "which streams exist?" {
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_streams", map[string]any{})}}
				}
				if len(last.ToolResults) > 0 {
					return llmtest.Reply{Text: "There is s-org. " + fmt.Sprint(strings.Contains(last.ToolResults[0].Content, `"s-org"`))}
				}
				return llmtest.Reply{Text: fmt.Sprintf("You said %q; %d messages so far.", last.Text, len(turn.Messages))}
			})
			db := filepath.Join(t.TempDir(), "helix-org.db")
			url := serveURL(t, db)
			st := openStore(t, db)
			useFake(t, st, format, fake)
			envs := t.TempDir()
			chat := func(stdin string, args ...string) string {
				t.Helper()
				out, errOut, err := run(t, stdin, append([]string{"chat", "--db", db, "--url", url, "--envs-dir", envs}, args...)...)
				if err != nil {
					t.Fatalf("chat %v: %v\n%s%s", args, err, out, errOut)
				}
				return out
			}

			out := chat("hello\nwhich streams exist?\n/exit\nnever sent\n")
			wantAll(t, "first chat", out, "Chatting as Owner (w-owner) through the built-in agent ("+format+" fake-model)",
				`You said "hello"; 1 messages so far.`, "[list_streams {}]", "There is s-org. true", "300 input and 30 output tokens")
			m := sessionLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no session id in:\n%s", out)
			}
			id := m[1]

			out = chat("and now?\n", "--resume", id)
			wantAll(t, "resumed chat", out, "resumed with 6 earlier messages", `You said "and now?"; 7 messages so far.`)
			turns := fake.Turns()
			var said []string
			for _, msg := range turns[len(turns)-1].Messages {
				if msg.Text != "" {
					said = append(said, string(msg.Role)+": "+msg.Text)
				}
			}
			want := []string{`user: hello`, `assistant: You said "hello"; 1 messages so far.`, "user: which streams exist?", "assistant: There is s-org. true", "user: and now?"}
			if strings.Join(said, "\n") != strings.Join(want, "\n") {
				t.Errorf("the third turn's request carried:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(want, "\n"))
			}

			// No flag resumes the last session; --new starts another.
			wantAll(t, "default chat", chat("again\n"), "session "+id+", resumed with 8 earlier messages", "9 messages so far")
			out = chat("fresh\n", "--new")
			if strings.Contains(out, id) || !strings.Contains(out, `You said "fresh"; 1 messages so far.`) {
				t.Errorf("chat --new:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(envs, "w-owner", "chat", "builtin-"+id+".json")); err != nil {
				t.Errorf("history file: %v", err)
			}
			if _, _, err := run(t, "", "chat", "--db", db, "--url", url, "--envs-dir", envs, "--resume", "no-such-session"); err == nil ||
				!strings.Contains(err.Error(), "no built-in chat session no-such-session") {
				t.Errorf("resuming an unknown session: %v", err)
			}
		})
	}
}

func TestChatBuiltinTurnErrorKeepsGoing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	n := 0
	fake := llmtest.New(t, llm.Anthropic, func(turn llmtest.Turn) llmtest.Reply {
		n++
		if n == 1 {
			return llmtest.Reply{Status: 400, Text: "prompt is too long"}
		}
		return llmtest.Reply{Text: fmt.Sprintf("Got %q.", turn.Last().Text)}
	})
	db := filepath.Join(t.TempDir(), "helix-org.db")
	url := serveURL(t, db)
	useFake(t, openStore(t, db), llm.Anthropic, fake)
	out, _, err := run(t, "one\ntwo\n", "chat", "--db", db, "--url", url, "--envs-dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The unanswered line and the next travel together: roles still alternate.
	wantAll(t, "chat", out, "error: anthropic: HTTP 400 Bad Request: prompt is too long", `Got "one\n\ntwo".`)
}
