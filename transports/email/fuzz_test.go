package email

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseInbound feeds arbitrary bodies to the Postmark parser: it must
// never panic, and what it accepts must be a consistent envelope.
func FuzzParseInbound(f *testing.F) {
	f.Add(readTestdata(f, "inbound.json"))
	f.Add(readTestdata(f, "reply.json"))
	f.Add([]byte(`{"OriginalRecipient":"h+@x","ToFull":[{"MailboxHash":"A"}],"Headers":[{"Name":"references","Value":"<<>>"}]}`))
	f.Add([]byte(`{"Attachments":[{"Name":"","Content":"","ContentLength":-1}]}`))
	f.Add([]byte(`{"HtmlBody":"<p>x</p>","StrippedTextReply":" "}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := ParseInbound(body)
		if err != nil {
			return
		}
		if !json.Valid(m.Message.Extra) {
			t.Fatalf("extra is not JSON: %q", m.Message.Extra)
		}
		if m.Alias != strings.ToLower(m.Alias) {
			t.Fatalf("alias %q is not lower-case", m.Alias)
		}
		if len(m.Contents) != len(m.Message.Attachments) {
			t.Fatalf("%d contents for %d attachments", len(m.Contents), len(m.Message.Attachments))
		}
		for i, a := range m.Message.Attachments {
			if a.Name == "" || a.Size != int64(len(m.Contents[i])) {
				t.Fatalf("attachment %d = %+v with %d bytes", i, a, len(m.Contents[i]))
			}
		}
		if m.Message.MessageID != "" && m.Message.ThreadID == "" {
			t.Fatalf("message %q has no thread", m.Message.MessageID)
		}
	})
}

// FuzzAuthorize: only the configured pair passes basic auth.
func FuzzAuthorize(f *testing.F) {
	f.Add("postmark", "s3cret", "postmark", "s3cret")
	f.Add("postmark", "s3cret", "postmark", "s3cre")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, user, pass, gotUser, gotPass string) {
		r := newBasicAuthRequest(gotUser, gotPass)
		err := authorize(Config{InboundUser: user, InboundPassword: pass}, r)
		want := user != "" && pass != "" && user == gotUser && pass == gotPass && !strings.Contains(gotUser, ":")
		if (err == nil) != want {
			t.Fatalf("authorize(%q:%q against %q:%q) = %v, want ok=%v", gotUser, gotPass, user, pass, err, want)
		}
	})
}
