package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// noticed puts a notice in worker's inbox and writes its event id into
// args' ids.
func noticed(worker string) (map[string]any, func(t *testing.T, f fixture)) {
	args := map[string]any{}
	return args, func(t *testing.T, f fixture) {
		ev, err := f.env.Store.Notify(t.Context(), worker, domain.Message{Subject: "approval ap-1 executed", Body: "it ran"}, "")
		if err != nil {
			t.Fatal(err)
		}
		args["ids"] = []string{ev.ID}
	}
}

// inboxOf is what worker's inbox lists of its own notices now.
func inboxOf(t *testing.T, f fixture, worker string) []domain.Event {
	t.Helper()
	evs, err := f.env.Store.EventsBefore(t.Context(), store.PageQuery{StreamIDs: []string{domain.InboxStream(worker)}, Undismissed: worker})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestDismissInbox(t *testing.T) {
	mine, notify := noticed(store.OwnerWorker)
	again, notifyAgain := noticed(store.OwnerWorker)
	others, notifyOwner := noticed(store.OwnerWorker)
	var ids []string
	for range maxDismiss + 1 {
		ids = append(ids, "e-x")
	}
	tooMany := make([]string, 0, maxDismiss+1)
	for i := range maxDismiss + 1 {
		tooMany = append(tooMany, "e-"+string(rune('a'+i%26))+domain.RandomSlug(8))
	}
	runTable(t, "dismiss_inbox", []toolCase[dismissInboxOut]{
		{name: "a notice leaves the inbox and stays on its stream", setup: notify, args: mine,
			check: func(t *testing.T, f fixture, got dismissInboxOut) {
				if len(got.Dismissed) != 1 {
					t.Fatalf("dismissed = %v, want the notice", got.Dismissed)
				}
				if left := inboxOf(t, f, store.OwnerWorker); len(left) != 0 {
					t.Errorf("the inbox still lists %v", left)
				}
				if _, err := f.env.Store.GetEvent(t.Context(), got.Dismissed[0]); err != nil {
					t.Errorf("the notice is gone from its stream: %v", err)
				}
			}},
		{name: "dismissing twice changes nothing", setup: func(t *testing.T, f fixture) {
			notifyAgain(t, f)
			must(t)(nil, f.env.Store.DismissInboxItems(t.Context(), store.OwnerWorker, again["ids"].([]string)))
		}, args: again, check: func(t *testing.T, f fixture, got dismissInboxOut) {
			if len(got.Dismissed) != 1 || len(inboxOf(t, f, store.OwnerWorker)) != 0 {
				t.Errorf("dismissed = %v, inbox = %v", got.Dismissed, inboxOf(t, f, store.OwnerWorker))
			}
		}},
		{name: "a failed run", setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args: map[string]any{"ids": []string{"a-run", "a-run"}},
			check: func(t *testing.T, f fixture, got dismissInboxOut) {
				if diff := cmp.Diff([]string{"a-run"}, got.Dismissed); diff != "" {
					t.Errorf("dismissed (-want +got):\n%s", diff)
				}
				acts, err := f.env.Store.ActivationsBefore(t.Context(), store.ActivationQuery{Workers: []string{"w-echo"}, Undismissed: store.OwnerWorker})
				if err != nil || len(acts) != 0 {
					t.Errorf("runs still listed: %v, %v", acts, err)
				}
			}},
		{name: "not another's inbox", caller: "w-maya", setup: notifyOwner, args: others, wantIs: domain.ErrForbidden},
		{name: "not the run of a worker one is not above", caller: "w-maya", setup: func(t *testing.T, f fixture) { running(t, f, "w-echo", "a-run") },
			args: map[string]any{"ids": []string{"a-run"}}, wantIs: domain.ErrForbidden},
		{name: "missing ids", args: map[string]any{}, wantErr: []string{"ids: is required"}, wantIs: domain.ErrInvalid},
		{name: "too many", args: map[string]any{"ids": tooMany}, wantErr: []string{"ids: at most 100 items at once; got 101"}, wantIs: domain.ErrInvalid},
		{name: "101 copies of one id are one item", args: map[string]any{"ids": ids}, wantErr: []string{`event "e-x": not found`}, wantIs: domain.ErrNotFound},
		{name: "not an item", args: map[string]any{"ids": []string{"w-maya"}},
			wantErr: []string{`ids[0]: "w-maya" is no inbox item: name a message or notice by its event id (e-…) or a failed run by its activation id (a-…)`}, wantIs: domain.ErrInvalid},
	}, cmpopts.IgnoreFields(dismissInboxOut{}, "Dismissed")) // event ids are random: each check looks
}
