package github

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse feeds arbitrary payloads to the parser: it must never panic,
// and whatever it accepts must carry valid JSON extra naming the event.
func FuzzParse(f *testing.F) {
	for _, s := range []struct{ event, file string }{{"issues", "issues.json"}, {"issue_comment", "issue_comment.json"}, {"pull_request", "pull_request.json"}, {"ping", "ping.json"}} {
		f.Add(s.event, readTestdata(f, s.file))
	}
	f.Add("push", []byte(`{"ref":"refs/heads/main","head_commit":{"message":"m"}}`))
	f.Add("issues", []byte(`{"issue":{"number":-1,"title":null,"body":"\u0000"}}`))
	f.Add("issues", []byte(`[]`))
	f.Add("", []byte(`{}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		d, err := Parse(event, "d", body)
		if err != nil {
			return
		}
		var extra map[string]json.RawMessage
		if err := json.Unmarshal(d.Message.Extra, &extra); err != nil {
			t.Fatalf("accepted payload has bad extra %q: %v", d.Message.Extra, err)
		}
		var got string
		if err := json.Unmarshal(extra["event"], &got); err != nil || got != event {
			t.Fatalf("extra.event = %s, want %q", extra["event"], event)
		}
	})
}

// FuzzVerifySignature checks the signature check against its definition:
// only the exact HMAC of the body under a non-empty secret verifies.
func FuzzVerifySignature(f *testing.F) {
	body := readTestdata(f, "issues.json")
	f.Add("s3cret", body, Sign("s3cret", body))
	f.Add("s3cret", body, "sha256=")
	f.Add("", []byte{}, Sign("", nil))
	f.Add("k", []byte("x"), "sha1=0000")
	f.Fuzz(func(t *testing.T, secret string, body []byte, header string) {
		want := Sign(secret, body)
		if secret != "" && !VerifySignature(secret, body, want) {
			t.Fatal("the body's own signature does not verify")
		}
		if VerifySignature(secret, body, header) && !bytes.EqualFold([]byte(header), []byte(want)) {
			t.Fatalf("header %q verified but the signature is %q", header, want)
		}
	})
}
