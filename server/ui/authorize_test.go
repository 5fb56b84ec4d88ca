package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/ui/uitest"
)

// TestConsentInTheBrowser: Maya, signed in with a one-time link, opens
// an MCP client's authorization URL in a real browser, sees the client's
// name and her worker, and presses Allow; the browser lands on the
// client's loopback redirect with a code that trades for a token of her
// endpoint. The page's policy lets that one form answer leave the site.
func TestConsentInTheBrowser(t *testing.T) {
	t.Parallel()
	o := newOrg(t)
	withMaya(t, o)
	landed := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case landed <- r.URL.Query():
		default:
		}
		w.Write([]byte("connected"))
	}))
	t.Cleanup(app.Close)
	redirect := app.URL + "/callback"
	resp, err := http.Post(o.base+"/oauth/register", "application/json", strings.NewReader(`{"client_name":"Maya's editor","redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()

	verifier := oauth2.GenerateVerifier()
	resource := domain.MCPURL(o.base, "w-maya")
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"s-42"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}}
	tab := o.tab(t, "w-maya")
	uitest.Do(t, tab, chromedp.Navigate(o.base+"/ui/oauth/authorize?"+q.Encode()), chromedp.WaitVisible(chromedp.CSS(`button[value="allow"]`)))
	text := uitest.Run(t, tab, chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"Connect Maya's editor", "w-maya", resource, strings.TrimPrefix(app.URL, "http://")} {
		if !strings.Contains(text, want) {
			t.Errorf("the consent page does not say %q:\n%s", want, text)
		}
	}
	// The consent page is shown at every size the other pages are,
	// without overflow.
	for _, size := range uiSizes {
		emulate(t, tab, size.width, size.height, size.mobile)
		if wide := uitest.Run(t, tab, chromedp.Evaluate[string](widest)); wide != "" {
			t.Errorf("consent at %s px: %s", size.name, wide)
		}
		uitest.Screenshot(t, tab, "consent-"+size.name)
	}
	uitest.Do(t, tab, chromedp.Click(chromedp.CSS(`button[value="allow"]`)))
	var got url.Values
	select {
	case got = <-landed:
	case <-time.After(30 * time.Second):
		t.Fatal("the browser never reached the client's redirect URI")
	}
	if got.Get("state") != "s-42" || got.Get("iss") != o.base || got.Get("code") == "" {
		t.Fatalf("the client got %v", got)
	}
	resp, err = http.PostForm(o.base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {reg.ClientID},
		"code": {got.Get("code")}, "code_verifier": {verifier}, "redirect_uri": {redirect}, "resource": {resource}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	info, err := o.h.Store.VerifyToken(t.Context(), tok.AccessToken)
	if resp.StatusCode != http.StatusOK || err != nil || info.WorkerID != "w-maya" {
		t.Errorf("exchange: %d, token of %q (%v)", resp.StatusCode, info.WorkerID, err)
	}
}
