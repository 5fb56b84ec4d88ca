package main

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/discord"
	"github.com/helixml/helix-org/transports/discord/discordtest"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/gitlab/gitlabtest"
	"github.com/helixml/helix-org/transports/slack"
	"github.com/helixml/helix-org/transports/slack/slacktest"
)

// TestGitLabEndToEnd: GitLab's documented comment on a merge request,
// carrying the stream's secret token, wakes the worker; its answer goes
// back as a note on that merge request; GitLab's retry is stored no more
// and a wrong token is refused.
func TestGitLabEndToEnd(t *testing.T) {
	t.Parallel()
	const secret, token = "gl-hook-secret-e2e-91f3", "glpat-e2e-token-77aa"
	fake := gitlabtest.New(t, token)
	fake.Project("gitlab-org/gitlab-test", 5)
	fake.MergeRequest("gitlab-org/gitlab-test", 1)
	st, base := echoOrg(t, gitlab.ConfigSetting, `{"token":"`+token+`","api_url":"`+fake.URL+`"}`,
		"s-test", "gitlab", `{"project":"gitlab-org/gitlab-test","events":["note","merge_request"],"secret":"`+secret+`"}`)
	body, err := os.ReadFile(filepath.Join("..", "..", "transports", "gitlab", "testdata", "note_merge_request.json"))
	must(t, err)
	hook := gitlabtest.Delivery{Event: "Note Hook", Token: secret, Idempotency: "9b7c2a40-e2e0-4d0c-8f5a-0a6c1d2e3f41"}
	if code, answer := postTo(t, base+"/gitlab/webhook", hook.Headers(), body); code != 200 {
		t.Fatalf("webhook: %d %s", code, answer)
	}
	got := fake.Next(t)
	want := gitlabtest.Note{Auth: "Bearer", Token: token, Project: "gitlab-org/gitlab-test", Noteable: "merge_requests", IID: 1, Body: "echo: This MR needs work.", ID: 1241}
	if got != want {
		t.Errorf("note = %+v, want %+v", got, want)
	}
	if code, answer := postTo(t, base+"/gitlab/webhook", hook.Headers(), body); code != 200 || !strings.Contains(answer, `"duplicate":true`) {
		t.Errorf("retry: %d %s, want 200 duplicate", code, answer)
	}
	wrong := gitlabtest.Delivery{Event: "Note Hook", Token: "gl-hook-secret-guess-0000"}
	if code, _ := postTo(t, base+"/gitlab/webhook", wrong.Headers(), body); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	waitIdle(t, st)
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-test"}})
	if len(evs) != 2 || evs[1].Source != "w-echo" || evs[1].Message.InReplyTo != evs[0].ID {
		t.Errorf("s-test holds %d events, want the comment and the worker's reply to it", len(evs))
	}
}

// TestDiscordEndToEnd: the server's own Gateway session receives a
// message from the fake gateway; it wakes the worker, whose answer starts
// a thread from that message and is posted in it; the bot's message
// coming back through the Gateway is not stored.
func TestDiscordEndToEnd(t *testing.T) {
	t.Parallel()
	const token = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhXk3a.abcdefghijklmnopqrstuvwxyz012345"
	const guild, channel, ada = "1200000000000000001", "1200000000000000002", "1000000000000000007"
	fake := discordtest.New(t, token)
	fake.Channel(guild, channel)
	st, _ := echoOrg(t, discord.ConfigSetting, `{"bot_token":"`+token+`","api_url":"`+fake.URL+`"}`,
		"s-general", "discord", `{"channel":"`+channel+`"}`)
	select {
	case <-fake.Connected():
	case <-time.After(30 * time.Second):
		t.Fatal("the server opened no Gateway session within 30s")
	}
	id := fake.Send(discordtest.Message{ChannelID: channel, AuthorID: ada, Author: "ada", Content: "is the build green?"})
	thread, parent, _ := fake.NextThread(t)
	got := fake.NextPost(t)
	if thread != id || parent != channel || got.ChannelID != id || got.Content != "echo: is the build green?" {
		t.Errorf("thread %s of %s, post %+v; want the answer in a thread started from %s", thread, parent, got, id)
	}
	waitIdle(t, st)
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-general"}})
	if len(evs) != 2 || evs[0].Message.MessageID != id || evs[1].Source != "w-echo" {
		t.Errorf("s-general holds %d events, want the message and the worker's reply", len(evs))
	}
}

// TestSlackSocketModeEndToEnd: with an app token and no public URL, the
// server holds a Socket Mode connection; a message naming the worker
// (Slack's own event shape) reaches the worker's stream and wakes it, its
// answer goes out in the message's thread; a reply in that thread that
// names no one reaches it again.
func TestSlackSocketModeEndToEnd(t *testing.T) {
	t.Parallel()
	const appToken, botToken = "xapp-1-A0APP-1-abcdef", "xoxb-1-2-abcdef"
	fake := slacktest.New(t, botToken)
	fake.SocketMode(appToken)
	st, _ := echoOrg(t, slack.ConfigSetting, `{"app_token":"`+appToken+`","bot_token":"`+botToken+`","api_url":"`+fake.URL+`"}`,
		"s-echo", "slack", `{"worker":"w-echo"}`)
	select {
	case <-fake.SocketConnected():
	case <-time.After(30 * time.Second):
		t.Fatal("the server opened no Socket Mode connection within 30s")
	}
	sample, err := os.ReadFile(filepath.Join("..", "..", "transports", "slack", "testdata", "MessagePayload.json"))
	must(t, err)
	const root = "1712345678.000200"
	fake.Push(slacktest.FromSample(sample, slacktest.Message{EventID: "Ev1", Channel: "C0GENERAL", User: "U0ADA", Text: "@Echo is the build green?", TS: root}))
	fake.NextAck(t)
	if got := fake.Next(t); got.Channel != "C0GENERAL" || got.ThreadTS != root || got.Text != "echo: @Echo is the build green?" {
		t.Errorf("chat.postMessage = %+v, want the echo in thread %s", got, root)
	}
	fake.Push(slacktest.FromSample(sample, slacktest.Message{EventID: "Ev2", Channel: "C0GENERAL", User: "U0ADA", Text: "and the docs?", TS: "1712345690.000100", ThreadTS: root}))
	fake.NextAck(t)
	if got := fake.Next(t); got.Channel != "C0GENERAL" || got.ThreadTS != root || got.Text != "echo: and the docs?" {
		t.Errorf("chat.postMessage = %+v, want the echo of the thread reply in thread %s", got, root)
	}
	waitIdle(t, st)
	evs, _ := st.ReadEvents(t.Context(), store.EventQuery{StreamIDs: []string{"s-echo"}})
	if len(evs) != 4 {
		t.Errorf("s-echo holds %d events, want the mention, the reply and the two answers", len(evs))
	}
}

// TestSlackInstallEndToEnd: through this binary's server and its UI's
// session check, the owner signed in with a link installs the Slack app;
// without a session the install sends the browser to sign in.
func TestSlackInstallEndToEnd(t *testing.T) {
	const clientID, clientSecret, botToken = "1234567890.9876543210", "0123456789abcdef0123456789abcdef", "xoxb-1-2-installed"
	st, base := transportServer(t)
	fake := slacktest.New(t, botToken)
	fake.OAuthApp(clientID, clientSecret, base+slack.CallbackPath)
	must(t, st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true"))
	must(t, st.SetSetting(t.Context(), slack.ConfigSetting, `{"client_id":"`+clientID+`","client_secret":"`+clientSecret+`","api_url":"`+fake.URL+`",`+
		`"oauth_url":"`+fake.AuthorizeURL()+`","redirect_url":"`+base+slack.CallbackPath+`"}`))
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/ui/signin" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(base + "/ui/slack/install")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin?next=%2Fui%2Fslack%2Finstall" {
		t.Fatalf("without a session: %d to %q, want 303 to sign in", resp.StatusCode, resp.Header.Get("Location"))
	}
	code, err := st.CreateSignInCode(t.Context(), servertest.Token(t, st, store.OwnerWorker), time.Minute)
	must(t, err)
	sid, _, err := st.SignInWithCode(t.Context(), code, time.Hour)
	must(t, err)
	u, _ := url.Parse(base + "/ui/")
	jar.SetCookies(u, []*http.Cookie{{Name: "helix_session", Value: sid, Path: "/ui/"}})
	resp, err = browser.Get(base + "/ui/slack/install")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("install: %d", resp.StatusCode)
	}
	raw, err := st.SettingOr(t.Context(), slack.ConfigSetting)
	must(t, err)
	var cfg map[string]string
	if json.Unmarshal([]byte(raw), &cfg) != nil || cfg["bot_token"] != botToken || cfg["bot_user_id"] != "U0BOT" || cfg["client_id"] != clientID {
		t.Errorf("transport.slack after the install: %v", cfg)
	}
}

// TestSlackManifestCmd: `helix-org slack manifest` prints the manifest.
func TestSlackManifestCmd(t *testing.T) {
	out := mustRun(t, "slack", "manifest", "--url", "https://org.example.com")
	var m struct {
		Settings struct {
			SocketMode bool `json:"socket_mode_enabled"`
		} `json:"settings"`
		OAuth struct {
			RedirectURLs []string `json:"redirect_urls"`
		} `json:"oauth_config"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || !m.Settings.SocketMode || len(m.OAuth.RedirectURLs) != 1 ||
		m.OAuth.RedirectURLs[0] != "https://org.example.com/slack/oauth/callback" {
		t.Errorf("manifest %s (%v)", out, err)
	}
	if _, _, err := run(t, "", "slack", "manifest", "--socket-mode=false"); err == nil || !strings.Contains(err.Error(), "needs the server's public https URL") {
		t.Errorf("Events API without a URL: %v", err)
	}
}
