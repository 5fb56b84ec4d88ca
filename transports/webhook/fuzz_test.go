package webhook_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/helixml/helix-org/transports/webhook"
	"github.com/helixml/helix-org/transports/webhook/webhooktest"
)

// FuzzInbound runs the inbound parser and verifier on arbitrary requests.
// Verify must agree with the reference verification on every input (a
// differential check), accept only a request carrying the signature of
// its headers as sent, and Parse must keep the body exactly and emit only
// valid JSON in Extra.
// `go test` runs the seeds; `make fuzz` explores.
func FuzzInbound(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	key, err := webhook.Key(secret)
	if err != nil {
		f.Fatal(err)
	}
	add := func(id string, ts int64, ct, body string) {
		f.Add(id, strconv.FormatInt(ts, 10), webhook.Sign(key, id, ts, []byte(body)), ct, []byte(body))
	}
	add("msg_1", now.Unix(), "application/json", `{"a":[1,2,{"b":null}]}`)
	add("msg_2", now.Unix()-299, "text/plain; charset=utf-8", "hello")
	add("msg_3", now.Unix()+301, "text/plain", "too new")
	add("msg_4", now.Unix(), "application/x-www-form-urlencoded", "name=Ada&topic=a&topic=b&x=%20")
	add("msg.5", now.Unix(), "application/vnd.api+json", `[]`)
	add("", now.Unix(), "", "")
	f.Add("msg_6", "1700000000", "v1,AAAA v1a,BBBB", "application/json", []byte(`{"a":`))
	f.Add("msg_7", "+1700000000", "v1,", "text/plain", []byte("\xff\xfe"))
	f.Add("msg_8", "-1", "v1,x  v1,y", "multipart/form-data; boundary=x", []byte("--x--"))
	f.Add("msg_9", "99999999999999999999", "", "application/x-www-form-urlencoded", []byte("a=%zz&b"))
	// The same second written another way is other signed content: a
	// signature over "1700000000" does not hold for "+1700000000" or
	// "01700000000", and one over those as sent does.
	f.Add("msg_10", "+1700000000", webhook.Sign(key, "msg_10", now.Unix(), []byte("x")), "text/plain", []byte("x"))
	f.Add("msg_11", "01700000000", webhook.Sign(key, "msg_11", now.Unix(), []byte("x")), "text/plain", []byte("x"))
	f.Add("msg_12", "+1700000000", webhooktest.Signature(secret, "msg_12", "+1700000000", []byte("x")), "text/plain", []byte("x"))

	f.Fuzz(func(t *testing.T, id, ts, sig, contentType string, body []byte) {
		h := http.Header{}
		h.Set(webhook.HeaderID, id)
		h.Set(webhook.HeaderTimestamp, ts)
		h.Set(webhook.HeaderSignature, sig)
		err := webhook.Verify(key, h, body, now)
		ref := webhooktest.Verify(secret, h, body, now)
		if (err == nil) != (ref == nil) {
			t.Fatalf("Verify = %v but the reference says %v", err, ref)
		}
		if err == nil {
			want := webhooktest.Signature(secret, h.Get(webhook.HeaderID), h.Get(webhook.HeaderTimestamp), body)
			if !strings.Contains(" "+h.Get(webhook.HeaderSignature)+" ", " "+want+" ") {
				t.Fatalf("accepted %q without its signature %s", h.Get(webhook.HeaderSignature), want)
			}
		}
		msg, err := webhook.Parse(contentType, body)
		if err != nil {
			return
		}
		if msg.Body != string(body) || msg.BodyContentType != contentType || !utf8.Valid(body) {
			t.Fatalf("parsed message %+v does not keep the body and type", msg)
		}
		if msg.Extra != nil && !json.Valid(msg.Extra) {
			t.Fatalf("Extra is not valid JSON: %q", msg.Extra)
		}
	})
}
