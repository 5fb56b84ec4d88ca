package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/safedial"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// toolCall is one call from a demo README's set-up block.
type toolCall struct {
	tool string
	args string
}

// readmeCalls reads the ```jsonc block under the given heading: each
// "// tool" comment line followed by that tool's JSON arguments.
func readmeCalls(t *testing.T, path, heading string) []toolCall {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), heading)
	if !ok {
		t.Fatalf("%s has no %q", path, heading)
	}
	_, block, ok := strings.Cut(section, "```jsonc\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatalf("%s: no jsonc block under %q", path, heading)
	}
	var calls []toolCall
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if tool, ok := strings.CutPrefix(line, "// "); ok {
			calls = append(calls, toolCall{tool: tool})
			continue
		}
		calls[len(calls)-1].args = line
	}
	return calls
}

// TestDemoWebhook follows demos/webhook/README.md against fakes: the
// set-up calls as written there (placeholders filled in), a signed form
// post, the secretary (a scripted agent following secretary.md's reply
// template) woken by it, and its summary POSTed to a fake of the sales
// team's system.
func TestDemoWebhook(t *testing.T) {
	t.Parallel()
	st := openTestStore(t)
	st.SetSetting(t.Context(), safedial.AllowPrivateSetting, "true") // README step 2, for a receiver on this machine
	sales := webhooktest.NewReceiver(t, hookSecret)
	base, _, owner := startServe(t, st, io.Discard)

	role, err := os.ReadFile("../../demos/webhook/secretary.md")
	if err != nil {
		t.Fatal(err)
	}
	roleJSON, _ := json.Marshal(string(role))
	fill := strings.NewReplacer(
		`"<the text of demos/webhook/secretary.md>"`, string(roleJSON),
		"<your secret>", hookSecret,
		"<the other system's URL>", sales.URL+"/hook",
	)
	calls := readmeCalls(t, "../../demos/webhook/README.md", "## 3. Set up the org")
	if len(calls) != 5 {
		t.Fatalf("README step 3 has %d calls, want 5", len(calls))
	}
	for _, c := range calls {
		var args map[string]any
		if err := json.Unmarshal([]byte(fill.Replace(c.args)), &args); err != nil {
			t.Fatalf("README call %s: %v", c.tool, err)
		}
		servertest.Call[map[string]any](t, owner, c.tool, args)
	}

	form := "name=Ada+Lovelace&email=ada%40example.com&message=We+need+20+seats+before+Friday"
	code, answer := postWebhook(t, base, "s-enquiries", hookSecret, "msg_form_1", "application/x-www-form-urlencoded", form, time.Now())
	if code != http.StatusOK {
		t.Fatalf("form post: %d %s", code, answer)
	}
	evs := servertest.Call[struct {
		Events []domain.Event `json:"events"`
	}](t, owner, "read_events", map[string]any{"streams": []string{"s-enquiries"}})
	if len(evs.Events) != 1 || string(evs.Events[0].Message.Extra) != `{"email":"ada@example.com","message":"We need 20 seats before Friday","name":"Ada Lovelace"}` {
		t.Fatalf("stored enquiry = %+v", evs.Events)
	}

	req, p := receive(t, sales)
	if req.Err != nil {
		t.Errorf("the summary fails the Standard Webhooks reference verification: %v", req.Err)
	}
	if want := "Summary: " + form; p.Data.Message.Body != want || p.Data.Source != "w-secretary" || p.Data.Message.InReplyTo != evs.Events[0].ID {
		t.Errorf("sales got %+v from %s, want %q in reply to the enquiry", p.Data.Message, p.Data.Source, want)
	}
	if d := waitDelivery(t, st, p.Data.ID); d.Status != domain.DeliveryDelivered {
		t.Errorf("delivery = %+v", d)
	}
	waitIdle(t, st)
	if n := len(sales.Requests()); n != 1 {
		t.Errorf("sales got %d requests, want just the summary", n)
	}
}
