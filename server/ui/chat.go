package ui

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

type chatsPage struct {
	Workers []domain.Worker
	Err     string
	Pager   pager
}

// handleChats lists who the viewer can chat with: AI workers first.
func (u *UI) handleChats(w http.ResponseWriter, r *http.Request, v *viewer) {
	p := chatsPage{}
	got, err := invoke[struct{ Workers []domain.Worker }](r.Context(), v, "list_workers", nil)
	if err == nil {
		err = needs(v, "dm")
	}
	p.Err = sectionErr(err)
	others := slices.DeleteFunc(got.Workers, func(w domain.Worker) bool { return w.ID == v.Worker.ID })
	slices.SortStableFunc(others, func(a, b domain.Worker) int {
		if a.Kind == b.Kind {
			return 0
		}
		if a.Kind == domain.WorkerAI {
			return -1
		}
		return 1
	})
	var next string
	p.Workers, next = pageAfter(others, func(w domain.Worker) string { return string(w.Kind) + "/" + w.ID }, r.URL.Query().Get("after"), limitOf(r))
	p.Pager = newPager(r, "after", next)
	u.render(w, r, http.StatusOK, "chats", pageData{Title: "Chat", Nav: "chat", V: v, Body: p})
}

type chatPage struct {
	With     domain.Worker
	Stream   string
	Messages []chatMessage
	Err      string
	Pager    pager
	Running  bool
	// Mute is set when the worker is an AI holding neither publish nor
	// dm: woken by a message, it has no tool to answer with.
	Mute bool
}

// chatMessage is one message of a chat, marked when the viewer sent it;
// Who is its sender's name, as a chat shows people.
type chatMessage struct {
	Ev   domain.Event
	Mine bool
	Who  string
}

// bubble is ev as a chat between me and with shows it: by the sender's
// name, or the sender's id when it is neither (the server, say).
func bubble(ev domain.Event, me, with domain.Worker) chatMessage {
	m := chatMessage{Ev: ev, Mine: ev.Source == me.ID, Who: cmp.Or(ev.Message.From, ev.Source)}
	switch {
	case m.Mine && me.Name != "":
		m.Who = me.Name
	case ev.Source == with.ID && with.Name != "":
		m.Who = with.Name
	}
	return m
}

// handleChat is a direct-message conversation with one worker, on the
// stream dm uses (s-dm-<a>-<b>); replies appear live as the worker
// publishes them.
func (u *UI) handleChat(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	other := r.PathValue("worker")
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	live := u.liveURL(ctx, "view", "chat", "worker", other)
	with, err := invoke[struct{ Worker domain.Worker }](ctx, v, "get_worker", map[string]any{"id": other})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	p := chatPage{With: with.Worker, Stream: store.DMStreamID(v.Worker.ID, other)}
	if err := u.chatMessages(r, v, &p, before); err != nil {
		p.Err, live = err.Error(), ""
	}
	if before != 0 {
		live = ""
	}
	if with.Worker.Kind == domain.WorkerAI && with.Worker.Active() {
		held, err := u.st.LiveTools(ctx, other)
		p.Mute = err == nil && !slices.Contains(held, "publish") && !slices.Contains(held, "dm")
	}
	if v.Can("worker_log") && with.Worker.Kind == domain.WorkerAI {
		running, _ := u.st.ActivationsBefore(ctx, store.ActivationQuery{Workers: []string{other}, Status: domain.ActivationRunning, Limit: 1})
		p.Running = len(running) > 0
	}
	u.render(w, r, http.StatusOK, "chat", pageData{Title: "Chat with " + with.Worker.Name, Nav: "chat", V: v, Live: live, Body: p})
}

// chatMessages reads a page of the conversation, if it has begun.
func (u *UI) chatMessages(r *http.Request, v *viewer, p *chatPage, before int64) error {
	ctx := r.Context()
	if err := firstErr(needs(v, "dm"), needs(v, "read_events")); err != nil {
		return err
	}
	if _, err := u.st.GetStream(ctx, p.Stream); errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err := probeStream(ctx, v, p.Stream); err != nil {
		return err
	}
	limit := limitOf(r)
	evs, err := u.st.EventsBefore(ctx, store.PageQuery{StreamIDs: []string{p.Stream}, Before: before, Limit: limit})
	if err != nil {
		return err
	}
	next := ""
	if len(evs) == limit {
		next = strconv.FormatInt(evs[len(evs)-1].Seq, 10)
	}
	slices.Reverse(evs)
	for _, ev := range evs {
		p.Messages = append(p.Messages, bubble(ev, v.Worker, p.With))
	}
	p.Pager = newPager(r, "before", next)
	return nil
}
