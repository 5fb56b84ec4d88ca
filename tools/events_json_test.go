package tools

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

// TestAnswerEventsAsAnswerJSON: the events' answer is byte for byte the
// general one, for every member present and absent and every string
// json.Marshal escapes.
func TestAnswerEventsAsAnswerJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 0, 0, 123456789, time.UTC)
	plain := domain.Event{ID: "e-1", Seq: 7, StreamID: "s-a", SourceKind: domain.SourceKind("human"), CreatedAt: at, Message: domain.Message{Body: "hello"}}
	with := func(f func(e *domain.Event)) domain.Event {
		e := plain
		f(&e)
		return e
	}
	tests := []struct {
		name   string
		events []domain.Event
	}{
		{"none", []domain.Event{}},
		{"plain", []domain.Event{plain}},
		{"two", []domain.Event{plain, with(func(e *domain.Event) { e.Seq = 8; e.ID = "e-2" })}},
		{"every member", []domain.Event{with(func(e *domain.Event) {
			e.Source, e.CausedBy, e.Depth, e.Undecodable = "w-owner", "e-0", 3, "why not"
			e.Message = domain.Message{From: "w-a", To: []string{"w-b", "w-a"}, Subject: "s", Body: "b", ThreadID: "t-1",
				InReplyTo: "m-0", MessageID: "m-1", BodyContentType: "text/markdown"}
		})}},
		{"escapes", []domain.Event{with(func(e *domain.Event) {
			e.Message.Body = "<b>hi</b> & \u2028 \u2029 \"q\" \\ \n\t\x01 caf\xc3\xa9 bad\xff end"
			e.Message.Subject, e.Source = "é", "w-<x>"
		})}},
		{"label", []domain.Event{with(func(e *domain.Event) {
			e.Label = domain.Label{Untrusted: true, Origin: `webhook "x" <y>`, Readers: []string{"w-a", "w-b"}, Narrowed: "e-3", By: []string{"outside"}}
		})}},
		{"readers only", []domain.Event{with(func(e *domain.Event) { e.Label = domain.Label{Readers: []string{}} })}},
		{"attachments and extra", []domain.Event{with(func(e *domain.Event) {
			e.Message.Attachments = []domain.Attachment{{Name: "a.txt", ContentType: "text/plain", Size: 3, Ref: "r-1"}}
			e.Message.Extra = json.RawMessage(`{"z": 1, "a": {"y": "<", "b": [2, 1]}}`)
		})}},
		{"empty extra", []domain.Event{with(func(e *domain.Event) { e.Message.Extra = json.RawMessage{} })}},
		{"zone", []domain.Event{with(func(e *domain.Event) { e.CreatedAt = at.In(time.FixedZone("x", 3600)) })}},
		{"zero time", []domain.Event{with(func(e *domain.Event) { e.CreatedAt = time.Time{} })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := readEventsOut{Events: tt.events, Cursor: 42}
			want, _, err := answerJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			got, structured, err := answerEvents(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("answerEvents differs from answerJSON (-want +got):\n%s", diff)
			}
			if string(structured.(Marshalled)) != string(got) {
				t.Error("structured content is not the text")
			}
		})
	}
	// A time json.Marshal refuses is refused alike.
	out := readEventsOut{Events: []domain.Event{with(func(e *domain.Event) { e.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) })}}
	if _, _, err := answerJSON(out); err == nil {
		t.Fatal("answerJSON took year 10000")
	}
	if _, _, err := answerEvents(out); err == nil {
		t.Error("answerEvents took year 10000")
	}
}
