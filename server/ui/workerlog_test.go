package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestExitLineSaysHowTheRunEnded: in a worker's activation log, the exit
// of a run that succeeded is not shown in the red of a failure, and the
// exit of one that failed is.
func TestExitLineSaysHowTheRunEnded(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	taskTeam(t, o)
	end := func(activation string, status domain.ActivationStatus, text string) {
		t.Helper()
		a, _, _, err := o.h.Store.Claim(t.Context(), "w-b1", activation, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		a.Status = status
		if err := o.h.Store.FinishActivation(t.Context(), a, logEntry("w-b1", activation, domain.LogExit, "", text)); err != nil {
			t.Fatal(err)
		}
	}
	end("act-ok", domain.ActivationSucceeded, "succeeded\nsession: s-1 (new)")
	o.call(t, "create_stream", map[string]any{"id": "s-work", "name": "work"})
	o.call(t, "subscribe", map[string]any{"stream": "s-work", "worker": "w-b1"})
	o.call(t, "publish", map[string]any{"stream": "s-work", "body": "Again."})
	end("act-bad", domain.ActivationFailed, "failed: exit status 1")

	tab := o.tab(t, "w-owner")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/workers/w-b1"), chromedp.WaitVisible(chromedp.CSS("#log .log-exit")))
	got := uitest.Run(t, tab, chromedp.Evaluate[map[string]bool](`(() => {
	  const probe = document.body.appendChild(document.createElement("span"));
	  probe.style.color = "var(--bad)";
	  const red = getComputedStyle(probe).color;
	  probe.remove();
	  const out = {};
	  for (const li of document.querySelectorAll("#log .log-exit"))
	    out[li.querySelector(".log-text").textContent.split(/[:\n]/)[0] + " in red"] = getComputedStyle(li.querySelector(".log-kind")).color === red;
	  return out;
	})()`))
	if diff := cmp.Diff(map[string]bool{"succeeded in red": false, "failed in red": true}, got); diff != "" {
		t.Errorf("exit lines (-want +got):\n%s", diff)
	}
}
