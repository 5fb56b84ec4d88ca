package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestWebUITokenRevokeEndsSession: `helix-org token revoke` on the token
// a person signed in with ends their browser session: the next page
// they open is the sign-in form. Signing out from the page does the same
// for a fresh sign-in.
func TestWebUITokenRevokeEndsSession(t *testing.T) {
	t.Parallel()
	o := newWebOrg(t, llmtest.FollowRole)
	tab := o.signIn(t)
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams"), chromedp.WaitVisible(chromedp.CSS("main .page-head")))

	if out := mustRun(t, "token", "revoke", "--worker", "w-owner", "--db", o.db); !strings.HasPrefix(out, "revoked ") {
		t.Fatalf("token revoke printed %q", out)
	}
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/streams"), chromedp.WaitVisible(chromedp.CSS(".signin")))
	if loc := uitest.Run(t, tab, chromedp.Location()); !strings.HasPrefix(loc, o.base+"/ui/signin") {
		t.Errorf("after token revoke the page is %s, want the sign-in form", loc)
	}

	// A fresh sign-in, then Sign out in the header.
	tab = o.signIn(t)
	uitest.Do(t, tab, chromedp.Click(chromedp.CSS(`form[action="/ui/signout"] button`)), chromedp.WaitVisible(chromedp.CSS(".signin")))
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/"), chromedp.WaitVisible(chromedp.CSS(".signin")))
}
