package tools

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// TestReadScope: a worker reads only streams it follows, and follows s-org
// and activation logs only where the chart lets it — through read_events
// (named or not, long-poll too) and worker_log alike. The events are there
// (the owner reads them); the outsider gets a refusal or nothing.
func TestReadScope(t *testing.T) {
	setup := func(t *testing.T, f fixture) {
		withLead(t, f)
		for _, stream := range []string{"s-activations-w-desk", "s-activations-w-echo"} {
			if _, err := f.env.Store.Append(t.Context(), domain.Event{StreamID: stream, Message: domain.Message{Body: "secret of " + stream}}, store.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		mustCall[any](t, f.env, "publish", map[string]any{"stream": "s-inbox", "body": "for followers"})
	}
	refusals := []struct {
		name, caller, tool string
		args               map[string]any
		want               string
	}{
		{"a stream you do not follow", "w-maya", "read_events", map[string]any{"streams": []string{"s-inbox"}}, "w-maya is not subscribed to s-inbox"},
		{"s-org", "w-lead", "read_events", map[string]any{"streams": []string{"s-org"}}, "only w-owner reads it"},
		{"a peer's log", "w-maya", "read_events", map[string]any{"streams": []string{"s-activations-w-echo"}}, "w-maya may only read the activation logs"},
		{"a peer's log, long-polling", "w-maya", "read_events", map[string]any{"streams": []string{"s-activations-w-echo"}, "wait": 30}, "w-maya may only read the activation logs"},
		{"a report's log you do not follow", "w-lead", "read_events", map[string]any{"streams": []string{"s-activations-w-desk"}}, "w-lead is not subscribed to s-activations-w-desk"},
		{"a log beside you", "w-lead", "worker_log", map[string]any{"worker": "w-echo"}, "w-lead may only read the activation logs of workers below p-lead"},
		{"a log beside you, long-polling", "w-lead", "worker_log", map[string]any{"worker": "w-echo", "wait": 30}, "w-lead may only read the activation logs"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t)
				setup(t, f)
				_, err := call[readOut](t, f.as(tc.caller), tc.tool, tc.args)
				if err == nil || !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s(%v) by %s = %v, want a refusal naming %q", tc.tool, tc.args, tc.caller, err, tc.want)
				}
			})
		})
	}

	t.Run("the owner and a manager read what the chart gives them", func(t *testing.T) {
		f := newFixture(t)
		setup(t, f)
		f.follow(t, store.OwnerWorker, domain.StreamOrg)
		if got := mustCall[readOut](t, f.env, "read_events", map[string]any{"streams": []string{domain.StreamOrg}}); len(got.Events) == 0 {
			t.Error("the owner read nothing on s-org")
		}
		got := mustCall[readOut](t, f.as("w-lead"), "worker_log", map[string]any{"worker": "w-desk"})
		if len(got.Events) != 1 || got.Events[0].Message.Body != "secret of s-activations-w-desk" {
			t.Errorf("w-lead read w-desk's log as %+v", got.Events)
		}
	})
}
