package dispatch_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/helixml/helix-org/dispatch"
	"github.com/helixml/helix-org/domain"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestRenderPromptGolden: the activation prompt an agent reads, for a
// hire and a batch of coalesced events with every envelope field, so any
// change to it is a reviewed diff (go test ./dispatch -run Golden -update).
func TestRenderPromptGolden(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	w := domain.Worker{ID: "w-echo", Name: "Echo"}
	act := domain.Activation{ID: "a-0001", WorkerID: "w-echo"}
	trigs := []domain.Trigger{
		{Kind: domain.TriggerHire, Event: domain.Event{ID: "e-hire", StreamID: domain.StreamOrg, Seq: 3, Source: "w-owner", SourceKind: domain.SourceHuman, CreatedAt: at,
			Message: domain.Message{From: "w-owner", Subject: "hire_worker w-echo", Body: "w-owner: hire_worker w-echo"}}},
		{Kind: domain.TriggerEvent, Event: domain.Event{ID: "e-mail", StreamID: "s-support", Seq: 7, SourceKind: domain.SourceSystem, CreatedAt: at,
			Message: domain.Message{From: "ada@example.com", To: []string{"h+sam@inbound.postmarkapp.com"}, Subject: "Invoice", Body: "Where is my invoice?\nThanks, Ada",
				ThreadID: "<m1@x>", MessageID: "<m1@x>", BodyContentType: "text/plain",
				Attachments: []domain.Attachment{{Name: "a.pdf", ContentType: "application/pdf", Size: 12, Ref: "att-1"}},
				Extra:       json.RawMessage(`{"reply_to":"ada@example.com"}`)}}},
		{Kind: domain.TriggerEvent, Event: domain.Event{ID: "e-reply", StreamID: "s-support", Seq: 9, Source: "w-maya", SourceKind: domain.SourceHuman, CausedBy: "a-0000", CreatedAt: at,
			Message: domain.Message{From: "w-maya", Body: "I'll take this one", InReplyTo: "e-mail"}}},
	}
	got := dispatch.RenderPrompt(w, act, trigs, nil)
	path := filepath.Join("testdata", "prompt.golden.txt")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./dispatch -run TestRenderPromptGolden -update)", err)
	}
	if string(want) != got {
		t.Errorf("the activation prompt changed; if meant, run go test ./dispatch -run TestRenderPromptGolden -update and review the diff.\ngot:\n%s", got)
	}
}
