package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
)

const (
	slackSecret = "8f742231b10e8888abcd99ee0f1c85a5"
	slackBot    = "xoxb-17-line3-quality"
)

// TestDemoManufacturing is demos/manufacturing/README.md end to end: the
// quality bot on the built-in agent following its role file, Slack faked
// on loopback. A failed batch is held and the supervisor asked in its
// thread; the supervisor's "approve" there releases it, "deny" scraps
// another; the line lead's "approve" releases nothing; a passed batch
// draws no word.
func TestDemoManufacturing(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, followRoles)
	st := demoStore(t)
	sl := slacktest.New(t, slackBot)
	for _, s := range []struct {
		spec  domain.SettingSpec
		value string
	}{
		{slack.ConfigSetting, `{"signing_secret":"` + slackSecret + `","bot_token":"` + slackBot + `","api_url":"` + sl.URL + `"}`},
		{safedial.AllowPrivateSetting, "true"}, // the fake Slack is on loopback
		{agent.RuntimeSetting, agent.RuntimeBuiltin},
	} {
		if err := st.SetSetting(t.Context(), s.spec, s.value); err != nil {
			t.Fatal(err)
		}
	}
	useFake(t, st, llm.Anthropic, fake)
	base, _, _ := startServe(t, st, io.Discard)
	demoTrace(t, st, "w-quality-bot")
	runSetup(t, st, base, "manufacturing")
	waitIdle(t, st)

	n := 0
	say := func(user, text, thread string) string {
		t.Helper()
		n++
		ts := fmt.Sprintf("1712346000.%06d", n)
		m := slacktest.Message{EventID: "Ev0" + ts, Channel: "C0LINE3", User: user, Text: text, TS: ts, ThreadTS: thread}
		headers := map[string]string{}
		for k, v := range slacktest.Headers(slackSecret, time.Now(), m.JSON()) {
			headers[k] = v[0]
		}
		if code, body := demoPost(t, base+"/slack/events", m.JSON(), headers, "", ""); code != 200 {
			t.Fatalf("Slack event %q: %d %s", text, code, body)
		}
		return ts
	}
	// reply is the bot's next message in Slack, which must be in thread.
	reply := func(thread, want string) {
		t.Helper()
		p := sl.Next(t)
		if p.Channel != "C0LINE3" || p.ThreadTS != thread || !strings.Contains(p.Text, want) {
			t.Errorf("the bot posted %+v; want %q in thread %s of C0LINE3", p, want, thread)
		}
	}
	mes := func() []string {
		var out []string
		for _, ev := range demoEvents(t, st, "s-line") {
			out = append(out, ev.Message.Subject+" "+strings.Fields(ev.Message.Body)[1])
		}
		return out
	}

	// README step 4: a batch fails its check, another passes.
	b1042 := say("U0LEAD", "Batch B-1042 finished: 3 of 50 units failed the torque check.", "")
	reply(b1042, "Holding this batch. <@U0SUPER>, reply approve")
	say("U0LEAD", "Batch B-1043 finished: 50 of 50 units passed.", "")
	waitIdle(t, st)
	// The line lead cannot release it; the supervisor can.
	say("U0LEAD", "approve", b1042)
	reply(b1042, "Only the shift supervisor")
	say("U0SUPER", "approve", b1042)
	reply(b1042, "Released by <@U0SUPER>")
	// The next failed batch is scrapped.
	b1044 := say("U0LEAD", "Batch B-1044 finished: 7 of 50 units failed the leak test.", "")
	reply(b1044, "Holding this batch.")
	say("U0SUPER", "deny", b1044)
	reply(b1044, "Scrapped on <@U0SUPER>'s word")
	waitIdle(t, st)

	want := []string{"HOLD B-1042", "RELEASE B-1042", "HOLD B-1044", "SCRAP B-1044"}
	if got := mes(); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("the MES was told %q, want %q", got, want)
	}
	if extra := sl.Posts(); len(extra) != 5 {
		t.Errorf("the bot posted %d messages in Slack, want 5 (nothing about B-1043): %+v", len(extra), extra)
	}
}
