package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/server/ui/uitest"
	"github.com/helixml/helix-org/store"
)

// webOrg is `helix-org serve` in-process — dispatcher and built-in agent
// runtime included, the model a scripted fake — with a browser to drive.
type webOrg struct {
	db, base string
	st       *store.Store
	owner    *mcp.ClientSession
}

func newWebOrg(t *testing.T, script llmtest.Script) *webOrg {
	t.Helper()
	fake := llmtest.New(t, llm.Anthropic, script) // first, so it outlives the server's runs
	db := filepath.Join(t.TempDir(), "helix-org.db")
	st, err := store.Open(t.Context(), db, store.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin); err != nil {
		t.Fatal(err)
	}
	useFake(t, st, llm.Anthropic, fake)
	base, _, owner := startServe(t, st, io.Discard)
	return &webOrg{db: db, base: base, st: st, owner: owner}
}

var webUILine = regexp.MustCompile(`(?m)^Web UI:\s+(\S+)`)

// signIn runs `helix-org bootstrap` against the served database, as the
// docs/web-ui.md says, opens the one-click link it prints in a browser and
// presses its button (opening the link alone signs nobody in).
func (o *webOrg) signIn(t *testing.T) context.Context {
	t.Helper()
	out := mustRun(t, "bootstrap", "--db", o.db, "--url", o.base)
	m := webUILine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed no Web UI line:\n%s", out)
	}
	tab := uitest.Tab(t)
	uitest.Do(t, tab, chromedp.Navigate(m[1]), chromedp.WaitVisible(chromedp.CSS(".signin")))
	if loc := uitest.Run(t, tab, chromedp.Location()); loc != m[1] {
		t.Errorf("opening the link went to %q; want its page, %s, until its button is pressed", loc, m[1])
	}
	uitest.Do(t, tab, chromedp.Click(chromedp.CSS(`form input[name="code"] ~ button`)), chromedp.WaitVisible(chromedp.CSS("header.top nav")))
	if loc := uitest.Run(t, tab, chromedp.Location()); loc != o.base+"/ui/" {
		t.Errorf("after the sign-in link the address bar reads %q, want %s/ui/ (the code must not stay in it)", loc, o.base)
	}
	return tab
}

// submit fills a form's fields (by name) and submits it, waiting for the
// next page: the old one is marked stale first, so it cannot pass for it.
func submit(t *testing.T, tab context.Context, form string, fields map[string]string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{chromedp.Evaluate[chromedp.Void](`document.body.dataset.stale = "1"`)}
	for name, value := range fields {
		sel := chromedp.CSS(form + ` [name="` + name + `"]`)
		actions = append(actions, chromedp.SetValue(sel, value))
	}
	actions = append(actions, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).requestSubmit()`, form)),
		chromedp.WaitVisible(chromedp.CSS("body:not([data-stale]) main .page-head")))
	uitest.Do(t, tab, actions...)
	if flash := uitest.Run(t, tab, chromedp.Evaluate[string](`(document.querySelector(".flash.error") || {}).textContent || ""`)); flash != "" {
		t.Fatalf("submitting %s: the page says %q", form, flash)
	}
}

func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return uitest.Run(t, tab, chromedp.Evaluate[string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent.trim()).join("\n")`, sel)))
}

// TestWebUIWalkthrough is the walkthrough (README, docs/concepts.md) done in the browser —
// sign in from bootstrap's link; create a role, a position, hire an AI
// and a person, create a stream, subscribe, publish — then read back over
// MCP, from the same server, that the org is what the pages made. The
// echo worker's reply appears on the open stream page live.
func TestWebUIWalkthrough(t *testing.T) {
	t.Parallel()
	o := newWebOrg(t, llmtest.FollowRole)
	tab := o.signIn(t)

	submit(t, tab, "#new-role form", map[string]string{"title": "Echo", "content": "Reply `echo: <body>` on the stream you were woken by."})
	if h1 := text(t, tab, "h1"); !strings.Contains(h1, "Echo") || !strings.Contains(h1, "r-echo") {
		t.Fatalf("after creating the role the page heading is %q, want the role page of r-echo", h1)
	}
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#new-position")))
	submit(t, tab, "#new-position form", map[string]string{"title": "Echo 1", "role": "r-echo"})
	submit(t, tab, "#hire form", map[string]string{"position": "p-echo-1", "name": "Echo"})
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/?hire=p-echo-1#hire"), chromedp.WaitVisible(chromedp.CSS("#hire")),
		chromedp.Click(chromedp.CSS(`#hire input[name="kind"][value="human"]`)))
	submit(t, tab, "#hire form", map[string]string{"name": "Maya"})

	// Echo was hired without grants; give it publish and read_events on
	// its page.
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/workers/w-echo"), chromedp.WaitVisible(chromedp.CSS("form[action='/ui/act/grant_tool']")))
	submit(t, tab, "form[action='/ui/act/grant_tool']", map[string]string{"tool": "publish"})
	submit(t, tab, "form[action='/ui/act/grant_tool']", map[string]string{"tool": "read_events"})

	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams"), chromedp.WaitVisible(chromedp.CSS("#new-stream")))
	submit(t, tab, "#new-stream form", map[string]string{"id": "s-inbox", "name": "inbox", "description": "where requests arrive"})
	for _, w := range []string{"w-echo", "w-owner"} {
		submit(t, tab, "form[action='/ui/act/subscribe']", map[string]string{"worker": w})
	}
	uitest.Do(t, tab, chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
	uitest.Do(t, tab, chromedp.SetValue(chromedp.CSS(".composer [name=subject]"), "greeting"),
		chromedp.SetValue(chromedp.CSS(".composer [name='to[]']"), "w-echo"),
		chromedp.SendKeys(chromedp.CSS(".composer [name=body]"), "hello"),
		chromedp.Click(chromedp.CSS(".composer button")))
	pollUntil(t, "the echo worker's reply on the open stream page", 30*time.Second, func() bool {
		return strings.Contains(text(t, tab, "#events article.event .md"), "echo: hello")
	})

	// The same org, seen over MCP.
	role := servertest.Call[domain.Role](t, o.owner, "get_role", map[string]any{"id": "r-echo"})
	if role.Title != "Echo" || !strings.Contains(role.Content, "echo: <body>") {
		t.Errorf("get_role r-echo = %+v", role)
	}
	positions := servertest.Call[struct{ Positions []domain.Position }](t, o.owner, "list_positions", map[string]any{"role": "r-echo"})
	if len(positions.Positions) != 1 || positions.Positions[0].ID != "p-echo-1" || positions.Positions[0].Title != "Echo 1" {
		t.Errorf("list_positions = %+v", positions.Positions)
	}
	workers := servertest.Call[struct{ Workers []domain.Worker }](t, o.owner, "list_workers", map[string]any{"position": "p-echo-1"})
	got := map[string]domain.WorkerKind{}
	for _, w := range workers.Workers {
		got[w.ID] = w.Kind
	}
	if got["w-echo"] != domain.WorkerAI || got["w-maya"] != domain.WorkerHuman || len(got) != 2 {
		t.Errorf("list_workers in p-echo-1 = %v, want w-echo (ai) and w-maya (human)", got)
	}
	grants := servertest.Call[struct{ Grants []domain.Grant }](t, o.owner, "list_grants", map[string]any{"worker": "w-echo"})
	if len(grants.Grants) != 2 || grants.Grants[0].Tool != "publish" || grants.Grants[1].Tool != "read_events" || grants.Grants[0].GrantedBy != "w-owner" {
		t.Errorf("list_grants w-echo = %+v", grants.Grants)
	}
	members := servertest.Call[struct{ Members []struct{ Worker string } }](t, o.owner, "stream_members", map[string]any{"stream": "s-inbox"})
	if len(members.Members) != 2 {
		t.Errorf("stream_members s-inbox = %+v, want w-echo and w-owner", members.Members)
	}
	evs := servertest.Call[struct{ Events []domain.Event }](t, o.owner, "read_events", map[string]any{"streams": []string{"s-inbox"}})
	if len(evs.Events) < 2 {
		t.Fatalf("read_events s-inbox = %d events, want hello and its echo", len(evs.Events))
	}
	hello := evs.Events[0]
	if hello.Source != "w-owner" || hello.Message.Subject != "greeting" || hello.Message.Body != "hello" || strings.Join(hello.Message.To, ",") != "w-echo" {
		t.Errorf("the published event over MCP = %+v", hello)
	}
}

// TestWebUIChat: a message typed in the chat page wakes the AI worker,
// and its reply appears in the conversation without a reload.
func TestWebUIChat(t *testing.T) {
	t.Parallel()
	o := newWebOrg(t, llmtest.FollowRole)
	call := func(tool string, args map[string]any) { servertest.Call[map[string]any](t, o.owner, tool, args) }
	call("create_role", map[string]any{"id": "r-echo", "title": "Echo", "content": "Reply `echo: <body>` on the stream you were woken by."})
	call("create_position", map[string]any{"id": "p-echo", "role": "r-echo", "title": "Echo"})
	call("hire_worker", map[string]any{"id": "w-echo", "position": "p-echo", "kind": "ai", "name": "Echo", "grants": []string{"publish", "read_events"}})
	waitIdle(t, o.st)
	tab := o.signIn(t)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/chat"), chromedp.Click(chromedp.CSS(`a[href="/ui/chat/w-echo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)),
		chromedp.SendKeys(chromedp.CSS(".chat-composer textarea"), "are you there?"), pressEnter())
	pollUntil(t, "Echo's reply in the chat", 30*time.Second, func() bool {
		return strings.Contains(text(t, tab, "#messages .bubble:not(.mine)"), "echo: are you there?")
	})
	if mine := text(t, tab, "#messages .bubble.mine .md"); strings.TrimSpace(mine) != "are you there?" {
		t.Errorf("my message in the chat reads %q", mine)
	}
	if left := uitest.Run(t, tab, chromedp.Value(chromedp.CSS(".chat-composer textarea"))); left != "" {
		t.Errorf("the composer still holds %q after sending", left)
	}
}

// pressEnter presses Enter as a keyboard does: one keyDown that carries its
// text, which Chrome types only if no keydown handler prevented it.
// (SendKeys types "\n" in a char event of its own, which lands whatever
// the page did: after the composer was cleared, when sending was quick.)
func pressEnter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		k := kb.Keys['\r']
		down := input.DispatchKeyEventParams{Type: kb.KeyDown, Key: k.Key, Code: k.Code, NativeVirtualKeyCode: k.Native,
			WindowsVirtualKeyCode: k.Windows, Text: k.Text, UnmodifiedText: k.Unmodified}
		up := down
		up.Type, up.Text, up.UnmodifiedText = kb.KeyUp, "", ""
		for _, ev := range []input.DispatchKeyEventParams{down, up} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestWebUIFleet: while an agent's run is blocked inside a tool call, the
// fleet page (open before the run began) shows it running and names the
// tool; when the call returns and the run ends, it shows it idle.
func TestWebUIFleet(t *testing.T) {
	t.Parallel()
	script := func(turn llmtest.Turn) llmtest.Reply {
		trigs := llmtest.Triggers(turn.Prompt())
		switch {
		case len(turn.Results()) > 0:
			return llmtest.Reply{Text: "Done waiting."}
		case len(trigs) == 1 && trigs[0].Body == "wait for it":
			return llmtest.Reply{Text: "Waiting for the signal.", ToolCalls: []llm.ToolCall{llmtest.Call("read_events", map[string]any{"streams": []string{"s-signal"}, "wait": 60})}}
		}
		return llmtest.Reply{Text: "Nothing to do."}
	}
	o := newWebOrg(t, script)
	call := func(tool string, args map[string]any) { servertest.Call[map[string]any](t, o.owner, tool, args) }
	call("create_role", map[string]any{"id": "r-wait", "title": "Waiter", "content": "Wait for the signal."})
	call("create_position", map[string]any{"id": "p-wait", "role": "r-wait", "title": "Waiter"})
	call("create_stream", map[string]any{"id": "s-inbox", "name": "inbox"})
	call("create_stream", map[string]any{"id": "s-signal", "name": "signal"})
	call("hire_worker", map[string]any{"id": "w-waiter", "position": "p-wait", "kind": "ai", "name": "Waiter", "grants": []string{"read_events"}})
	call("subscribe", map[string]any{"stream": "s-inbox", "worker": "w-waiter"})
	call("subscribe", map[string]any{"stream": "s-signal", "worker": "w-waiter"}) // it reads what it waits on
	waitIdle(t, o.st)

	tab := o.signIn(t)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/fleet"), chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="live"]`)))
	if idle := text(t, tab, "section[aria-label=Idle] a"); idle != "Waiter" {
		t.Fatalf("before the run the idle list is %q", idle)
	}
	call("publish", map[string]any{"stream": "s-inbox", "body": "wait for it"})
	pollUntil(t, "the fleet page to show Waiter calling read_events", 30*time.Second, func() bool {
		return text(t, tab, "#run-w-waiter .now .tool") == "read_events"
	})
	if woken := text(t, tab, "#run-w-waiter .woken li"); !strings.Contains(woken, "s-inbox: wait for it") {
		t.Errorf("woken by %q, want the event on s-inbox", woken)
	}
	if args := text(t, tab, "#run-w-waiter .now .args"); !strings.Contains(args, `"s-signal"`) {
		t.Errorf("the call's arguments read %q", args)
	}
	uitest.Screenshot(t, tab, "fleet-mid-run")

	call("publish", map[string]any{"stream": "s-signal", "body": "go"})
	pollUntil(t, "the fleet page to show Waiter idle again", 30*time.Second, func() bool {
		return text(t, tab, "section[aria-label=Idle] a") == "Waiter"
	})
}

// pollUntil polls cond until it holds or d passes.
func pollUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTokenCreateSignInLink: a token minted for a person comes with a
// sign-in link that signs in as them; an AI worker's comes without one.
func TestTokenCreateSignInLink(t *testing.T) {
	db := tempDB(t)
	mustRun(t, "bootstrap", "--init", "--db", db)
	st := openStore(t, db)
	if _, err := st.CreateRole(t.Context(), store.OwnerWorker, domain.Role{ID: "r-staff", Title: "Staff"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreatePosition(t.Context(), store.OwnerWorker, domain.Position{ID: "p-staff", RoleID: "r-staff", Title: "Staff"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []domain.Worker{{ID: "w-maya", Kind: domain.WorkerHuman, PositionID: "p-staff", Name: "Maya"},
		{ID: "w-bot", Kind: domain.WorkerAI, PositionID: "p-staff", Name: "Bot"}} {
		if _, err := st.HireWorker(t.Context(), store.OwnerWorker, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	out := mustRun(t, "token", "create", "w-maya", "--db", db, "--url", "http://org.example")
	m := regexp.MustCompile(`(?m)^Web UI:\s+http://org\.example/ui/signin\?code=(hxc_\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("token create for a person printed no sign-in link:\n%s", out)
	}
	if _, sess, err := st.SignInWithCode(t.Context(), m[1], time.Hour); err != nil || sess.WorkerID != "w-maya" {
		t.Errorf("the printed link signs in as %q (%v), want w-maya", sess.WorkerID, err)
	}
	if out := mustRun(t, "token", "create", "w-bot", "--db", db); strings.Contains(out, "Web UI:") {
		t.Errorf("token create for an AI worker printed a sign-in link:\n%s", out)
	}
}
