package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/outbox"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
	"github.com/helixml/helix-org/transports/delivery"
	"github.com/helixml/helix-org/transports/inbound"
	"github.com/helixml/helix-org/transports/telegram"
	"github.com/helixml/helix-org/transports/telegram/telegramtest"
	"github.com/helixml/helix-org/transports/transport"
)

func TestAskHuman(t *testing.T) {
	runTable(t, "ask_human", []toolCase[askHumanOut]{
		{name: "no person", args: map[string]any{"question": "Ship it?"}, wantErr: []string{"person"}, wantIs: domain.ErrInvalid},
		{name: "no question", args: map[string]any{"person": "w-maya"}, wantErr: []string{"question"}, wantIs: domain.ErrInvalid},
		{name: "an AI worker is no person", args: map[string]any{"person": "w-echo", "question": "Ship it?"},
			wantErr: []string{"person", "w-echo is an AI worker"}, wantIs: domain.ErrInvalid},
		{name: "an unknown position", args: map[string]any{"person": "p-none", "question": "Ship it?"}, wantIs: domain.ErrNotFound},
		{name: "a position two hold", args: map[string]any{"person": "p-support", "question": "Ship it?"},
			wantErr: []string{"person", "has 2 workers"}, wantIs: domain.ErrInvalid},
		{
			name: "a question waits for its answer, which quotes it and closes it", caller: "w-echo",
			args: map[string]any{"person": "w-maya", "question": "May I refund order 7?", "expectsReply": true},
			want: askHumanOut{Stream: "s-dm-w-echo-w-maya", Open: true, Event: domain.Event{StreamID: "s-dm-w-echo-w-maya", Source: "w-echo",
				SourceKind: domain.SourceAI, CreatedAt: t0, Message: domain.Message{From: "w-echo", To: []string{"w-maya"},
					Subject: "Question from w-echo", Body: "May I refund order 7?", Extra: json.RawMessage(`{"ask":"question"}`)}}},
			check: func(t *testing.T, f fixture, got askHumanOut) {
				if open, err := f.env.Store.OpenQuestions(t.Context(), []string{got.Event.ID}); err != nil || !open[got.Event.ID] {
					t.Fatalf("open = %v, %v; want the question open", open, err)
				}
				answer := mustCall[dmOut](t, f.as("w-maya"), "dm", map[string]any{"to": "w-echo", "body": "Yes.", "inReplyTo": got.Event.ID})
				var extra struct{ Question store.QuotedQuestion }
				if err := json.Unmarshal(answer.Event.Message.Extra, &extra); err != nil || extra.Question.Text != "May I refund order 7?" || extra.Question.ID != got.Event.ID {
					t.Errorf("answer extra = %s, want the question quoted", answer.Event.Message.Extra)
				}
				if open, _ := f.env.Store.OpenQuestions(t.Context(), []string{got.Event.ID}); open[got.Event.ID] {
					t.Error("the answered question is still open")
				}
			},
		},
		{name: "a clarifying question must wait for its answer", caller: "w-echo", setup: withSpecTask,
			args:    map[string]any{"person": "w-owner", "question": "Passwords or passkeys?", "task": "t-login"},
			wantErr: []string{"expectsReply", "waits for its answer"}, wantIs: domain.ErrInvalid},
		{name: "only the task's planner asks for it", caller: "w-b1", setup: withSpecTask,
			args:    map[string]any{"person": "w-owner", "question": "Passwords or passkeys?", "expectsReply": true, "task": "t-login"},
			wantErr: []string{"only the planner w-echo"}, wantIs: domain.ErrForbidden},
		{name: "not once the spec is submitted", caller: "w-echo", setup: withSubmitted,
			args:    map[string]any{"person": "w-owner", "question": "Passwords or passkeys?", "expectsReply": true, "task": "t-login"},
			wantErr: []string{`state "spec_review"`, "while it writes the spec"}, wantIs: domain.ErrConflict},
		{
			name: "a clarifying question: the task waits for the reviewer's answer, each step an event on its stream", caller: "w-echo", setup: withSpecTask,
			args: map[string]any{"person": "w-owner", "question": "Passwords or passkeys?", "expectsReply": true, "task": "t-login"},
			want: askHumanOut{Stream: "s-dm-w-echo-w-owner", Open: true, Event: domain.Event{StreamID: "s-dm-w-echo-w-owner", Source: "w-echo",
				SourceKind: domain.SourceAI, CreatedAt: t0, Message: domain.Message{From: "w-echo", To: []string{"w-owner"},
					Subject: "Question from w-echo", Body: "Passwords or passkeys?", Extra: json.RawMessage(`{"ask":"question"}`)}}},
			check: func(t *testing.T, f fixture, got askHumanOut) {
				if view := mustCall[store.SpecTaskView](t, f.env, "get_spec_task", map[string]any{"task": "t-login"}); view.Asking != got.Event.ID {
					t.Errorf("asking = %q, want %s", view.Asking, got.Event.ID)
				}
				submit := map[string]any{"task": "t-login", "design": "# Design\n", "items": loginItems}
				wantCallErr(t, f.as("w-echo"), "submit_spec", submit, domain.ErrConflict, "waits for the answer to the planner's question "+got.Event.ID)
				mustCall[dmOut](t, f.as("w-owner"), "dm", map[string]any{"to": "w-echo", "body": "Passkeys, with passwords as a fallback.", "inReplyTo": got.Event.ID})
				if state := mustCall[taskOut](t, f.as("w-echo"), "submit_spec", submit).State; state != "spec_review" {
					t.Errorf("after the answer submit_spec left the task %s", state)
				}
				var steps []string
				for _, ev := range taskEvents(t, f, "t-login") {
					var m struct{ Clarify, Question string }
					if json.Unmarshal(ev.Message.Extra, &m); m.Clarify != "" && m.Question == got.Event.ID {
						steps = append(steps, m.Clarify+": "+ev.Message.Subject+": "+ev.Message.Body)
					}
				}
				want := []string{"asked: t-login: waiting for w-owner's answer: Passwords or passkeys?",
					"answered: t-login: w-owner answered: Passkeys, with passwords as a fallback."}
				if strings.Join(steps, "\n") != strings.Join(want, "\n") {
					t.Errorf("the task's stream told %q, want %q", steps, want)
				}
			},
		},
		{
			name: "a notice opens no question", caller: "w-echo",
			args: map[string]any{"person": "w-maya", "question": "Order 7 is refunded."},
			want: askHumanOut{Stream: "s-dm-w-echo-w-maya", Event: domain.Event{StreamID: "s-dm-w-echo-w-maya", Source: "w-echo",
				SourceKind: domain.SourceAI, CreatedAt: t0, Message: domain.Message{From: "w-echo", To: []string{"w-maya"},
					Subject: "Notice from w-echo", Body: "Order 7 is refunded.", Extra: json.RawMessage(`{"ask":"notice"}`)}}},
			check: func(t *testing.T, f fixture, got askHumanOut) {
				if open, _ := f.env.Store.OpenQuestions(t.Context(), []string{got.Event.ID}); open[got.Event.ID] {
					t.Error("a notice is an open question")
				}
			},
		},
	}, ignoreEventID)
}

// runRecorder is a runtime that keeps each run's prompt.
type runRecorder struct {
	mu   sync.Mutex
	runs []domain.Run
}

func (r *runRecorder) Run(_ context.Context, run domain.Run) (domain.RunResult, error) {
	run.Started(domain.AgentProcess{})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, run)
	return domain.RunResult{}, nil
}

// TestAskHumanAnsweredOnTelegram: an AI worker asks Lee, whose contact
// is Telegram; the question goes out with sendMessage; Lee's reply to it
// in Telegram wakes the asker, whose prompt has the answer and quotes the
// question.
func TestAskHumanAnsweredOnTelegram(t *testing.T) {
	const botToken, secret = "123456789:AAE-abcdefghijklmnopqrstuvwxyz_0123", "s3cret-Token"
	ctx := t.Context()
	st := storetest.NewWith(t, store.Options{Transports: transport.List{telegram.Transport}.Specs(), NoListen: true})
	fake := telegramtest.New(t, botToken)
	must(t)(nil, st.SetSetting(ctx, telegram.ConfigSetting, `{"bot_token":"`+botToken+`","secret_token":"`+secret+`","api_url":"`+fake.URL+`"}`))
	must(t)(st.Bootstrap(ctx, Names()))
	must(t)(st.CreateRole(ctx, store.OwnerWorker, domain.Role{ID: "r-desk", Title: "Desk", Content: "Refund what the lead allows."}))
	must(t)(st.CreatePosition(ctx, store.OwnerWorker, domain.Position{ID: "p-desk", RoleID: "r-desk", Title: "Desk"}))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-desk", Kind: domain.WorkerAI, PositionID: "p-desk", Name: "Desk"}, nil))
	must(t)(st.HireWorker(ctx, store.OwnerWorker, domain.Worker{ID: "w-lee", Kind: domain.WorkerHuman, PositionID: "p-desk", Name: "Lee"}, nil))
	must(t)(st.SetContact(ctx, store.OwnerWorker, "w-lee", store.Contact{Kind: string(telegram.Kind), Address: "90017"}))
	hook := httptest.NewServer(inbound.Mux(st, nil, nil, telegram.Endpoint(st)))
	t.Cleanup(hook.Close)
	rec := &runRecorder{}
	d := dispatch.New(st, rec, dispatch.Options{EnvsDir: t.TempDir(), MCPBaseURL: "http://127.0.0.1:1"})
	engine := outbox.New(st, []delivery.Sender{telegram.NewSender(st, nil)}, outbox.Options{})

	asked := mustCall[askHumanOut](t, &Env{Store: st, Caller: "w-desk", Known: Names()}, "ask_human",
		map[string]any{"person": "w-lee", "question": "May I refund order 7 (EUR 120)?", "expectsReply": true})
	if err := engine.Step(ctx); err != nil {
		t.Fatal(err)
	}
	sent := fake.Next(t)
	if sent.ChatID != 90017 || !strings.Contains(sent.Text, "May I refund order 7 (EUR 120)?") {
		t.Fatalf("sendMessage %+v, want the question in Lee's chat", sent)
	}

	reply := telegramtest.Message{UpdateID: 9100, MessageID: 81, ChatID: 90017, From: "lee", ReplyTo: sent.MessageID, Text: "Yes, refund it."}
	req, _ := http.NewRequest(http.MethodPost, hook.URL+"/telegram/webhook", bytes.NewReader(reply.JSON()))
	req.Header = telegramtest.Headers(secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %v %v", resp, err)
	}
	resp.Body.Close()

	// Telegram vouches it is Lee: the answer is Lee's, as trusted as Lee.
	dm, err := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{asked.Stream}})
	if err != nil || len(dm) != 2 {
		t.Fatalf("the DM holds %d events (%v), want the question and the answer", len(dm), err)
	}
	if answer := dm[1]; answer.Source != "w-lee" || answer.Label.Untrusted || answer.Message.InReplyTo != asked.Event.ID {
		t.Errorf("the answer: source %q, label %+v, inReplyTo %q; want Lee's trusted answer to the question", answer.Source, answer.Label, answer.Message.InReplyTo)
	}

	if err := d.Step(ctx); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if len(rec.runs) != 1 || rec.runs[0].WorkerID != "w-desk" {
		t.Fatalf("runs = %+v, want one of w-desk", rec.runs)
	}
	prompt := rec.runs[0].Prompt
	for _, want := range []string{"on stream " + asked.Stream, "source: w-lee (human)", "inReplyTo: " + asked.Event.ID,
		`"question":{"id":"` + asked.Event.ID + `","asker":"w-desk","text":"May I refund order 7 (EUR 120)?"}`, "    Yes, refund it."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the asker's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if open, _ := st.OpenQuestions(ctx, []string{asked.Event.ID}); open[asked.Event.ID] {
		t.Error("Lee answered, and the question is still open")
	}
}
