package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/transports/discord"
	"github.com/helixml/helix-org/transports/discord/discordtest"
	"github.com/helixml/helix-org/transports/gitlab"
	"github.com/helixml/helix-org/transports/gitlab/gitlabtest"
)

// TestGitLabEndToEnd: GitLab's documented comment on a merge request,
// carrying the stream's secret token, wakes the worker; its answer goes
// back as a note on that merge request; GitLab's retry is stored no more
// and a wrong token is refused.
func TestGitLabEndToEnd(t *testing.T) {
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
