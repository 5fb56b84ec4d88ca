package email

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/helixml/helix-org/domain"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modify decodes a testdata message, changes it and encodes it again.
func modify(t testing.TB, name string, change func(in *Inbound)) []byte {
	t.Helper()
	var in Inbound
	if err := json.Unmarshal(readTestdata(t, name), &in); err != nil {
		t.Fatal(err)
	}
	change(&in)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseInbound(t *testing.T) {
	cases := []struct {
		name      string
		body      []byte
		want      Mail
		wantExtra extra
		wantErr   bool
	}{
		{
			name: "first message with an attachment",
			body: readTestdata(t, "inbound.json"),
			want: Mail{Alias: "sam", DedupKey: "73e6d360-66eb-11e1-8e72-a8904824019b", Contents: [][]byte{[]byte("March 2026: 2 x 49.00")},
				Message: domain.Message{From: "ada@example.com", To: []string{"451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com"},
					Subject: "Invoice 1843 is wrong", Body: "Hello,\n\nInvoice 1843 charges me twice for March.\n\nAda", BodyContentType: "text/plain",
					MessageID: "<CAHxX=first@mail.example.com>", ThreadID: "<CAHxX=first@mail.example.com>",
					Attachments: []domain.Attachment{{Name: "invoice-1843.txt", ContentType: "text/plain", Size: 21}}}},
			wantExtra: extra{PostmarkMessageID: "73e6d360-66eb-11e1-8e72-a8904824019b", FromName: "Ada Lovelace", Cc: []string{"charles@example.com"},
				OriginalRecipient: "451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com", Date: "Wed, 4 Mar 2026 10:00:00 +0000"},
		},
		{
			name: "a reply: stripped text, threaded on the References root",
			body: readTestdata(t, "reply.json"),
			want: Mail{Alias: "sam", DedupKey: "0a129aee-e1cd-480d-b08d-4f48548ff48d",
				Message: domain.Message{From: "ada@example.com", To: []string{"451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com"},
					Subject: "Re: Invoice 1843 is wrong", Body: "Thanks, that fixed it.", BodyContentType: "text/plain",
					MessageID: "<CAHxX=second@mail.example.com>", InReplyTo: "<reply-1@mtasv.net>", ThreadID: "<CAHxX=first@mail.example.com>"}},
			wantExtra: extra{PostmarkMessageID: "0a129aee-e1cd-480d-b08d-4f48548ff48d", FromName: "Ada Lovelace", ReplyTo: "ada@work.example.com",
				OriginalRecipient: "451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com", Date: "Wed, 4 Mar 2026 10:00:00 +0000",
				References: []string{"<CAHxX=first@mail.example.com>", "<reply-1@mtasv.net>"}, TextBody: "Thanks, that fixed it.\n\nOn Wed, Sam wrote:\n> We refunded the duplicate."},
		},
		{
			name: "HTML only; no Message-ID header; alias from ToFull; upper-case alias",
			body: []byte(`{"From":"\"B\" <b@example.com>","ToFull":[{"Email":"h+Billing@inbound.postmarkapp.com","MailboxHash":"Billing"}],
				"Subject":"s","MessageID":"pm-1","HtmlBody":"<p>hi</p>","Headers":[{"Name":"In-Reply-To","Value":"<x@y>"}]}`),
			want: Mail{Alias: "billing", DedupKey: "pm-1", Message: domain.Message{From: "b@example.com", To: []string{"h+Billing@inbound.postmarkapp.com"}, Subject: "s",
				Body: "<p>hi</p>", BodyContentType: "text/html", MessageID: "pm-1", InReplyTo: "<x@y>", ThreadID: "<x@y>"}},
			wantExtra: extra{PostmarkMessageID: "pm-1"},
		},
		{
			name:      "no alias anywhere",
			body:      []byte(`{"From":"b@example.com","OriginalRecipient":"h@inbound.postmarkapp.com","MessageID":"pm-2","TextBody":"x"}`),
			want:      Mail{DedupKey: "pm-2", Message: domain.Message{From: "b@example.com", Body: "x", BodyContentType: "text/plain", MessageID: "pm-2", ThreadID: "pm-2"}},
			wantExtra: extra{PostmarkMessageID: "pm-2", OriginalRecipient: "h@inbound.postmarkapp.com"},
		},
		{
			name: "attachments only: the body names them",
			body: []byte(`{"From":"b@example.com","MessageID":"pm-3","Attachments":[{"Name":"a.pdf","Content":"eA==","ContentType":"application/pdf"},{"Name":"b.png","Content":"eQ=="}]}`),
			want: Mail{DedupKey: "pm-3", Contents: [][]byte{[]byte("x"), []byte("y")}, Message: domain.Message{From: "b@example.com",
				Body: "(no text; attachments: a.pdf, b.png)", BodyContentType: "text/plain", MessageID: "pm-3", ThreadID: "pm-3",
				Attachments: []domain.Attachment{{Name: "a.pdf", ContentType: "application/pdf", Size: 1}, {Name: "b.png", Size: 1}}}},
			wantExtra: extra{PostmarkMessageID: "pm-3"},
		},
		{
			name:      "blank text beside HTML: the HTML is the body",
			body:      []byte(`{"From":"b@example.com","MessageID":"pm-4","TextBody":" \n","HtmlBody":"<p>hi</p>"}`),
			want:      Mail{DedupKey: "pm-4", Message: domain.Message{From: "b@example.com", Body: "<p>hi</p>", BodyContentType: "text/html", MessageID: "pm-4", ThreadID: "pm-4"}},
			wantExtra: extra{PostmarkMessageID: "pm-4"},
		},
		{
			name: "a reply whose whole text is too large for extra: the text is an attachment",
			body: modify(t, "reply.json", func(in *Inbound) { in.TextBody = strings.Repeat("t", domain.MaxExtra) }),
			want: Mail{Alias: "sam", DedupKey: "0a129aee-e1cd-480d-b08d-4f48548ff48d", Contents: [][]byte{[]byte(strings.Repeat("t", domain.MaxExtra))},
				Message: domain.Message{From: "ada@example.com", To: []string{"451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com"},
					Subject: "Re: Invoice 1843 is wrong", Body: "Thanks, that fixed it.", BodyContentType: "text/plain",
					MessageID: "<CAHxX=second@mail.example.com>", InReplyTo: "<reply-1@mtasv.net>", ThreadID: "<CAHxX=first@mail.example.com>",
					Attachments: []domain.Attachment{{Name: FullTextAttachment, ContentType: "text/plain; charset=utf-8", Size: int64(domain.MaxExtra)}}}},
			wantExtra: extra{PostmarkMessageID: "0a129aee-e1cd-480d-b08d-4f48548ff48d", FromName: "Ada Lovelace", ReplyTo: "ada@work.example.com",
				OriginalRecipient: "451d9b70cf9364d23ff6f9d51d870251569e+sam@inbound.postmarkapp.com", Date: "Wed, 4 Mar 2026 10:00:00 +0000",
				References: []string{"<CAHxX=first@mail.example.com>", "<reply-1@mtasv.net>"}},
		},
		{name: "no text and no attachments", body: []byte(`{"From":"b@example.com","MessageID":"pm-5","TextBody":"  ","HtmlBody":""}`), wantErr: true},
		{name: "malformed JSON", body: []byte(`{"From":`), wantErr: true},
		{name: "a JSON array", body: []byte(`[]`), wantErr: true},
		{name: "ToFull of the wrong type", body: []byte(`{"ToFull":"x"}`), wantErr: true},
		{name: "attachment content not base64", body: []byte(`{"Attachments":[{"Name":"a","Content":"%%%"}]}`), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInbound(tc.body)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseInbound succeeded with %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var x extra
			if err := json.Unmarshal(got.Message.Extra, &x); err != nil {
				t.Fatalf("extra %s: %v", got.Message.Extra, err)
			}
			got.Message.Extra = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mail (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantExtra, x); diff != "" {
				t.Errorf("extra (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMsgIDs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"<a@b>", []string{"<a@b>"}},
		{"<a@b>\r\n\t<c@d> <e@f>", []string{"<a@b>", "<c@d>", "<e@f>"}},
		{"a@b c@d", []string{"a@b", "c@d"}},
		{"<> <a@b", []string{"<>", "<a@b"}},
		{"(comment) <a@b>", []string{"<a@b>"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, msgIDs(tc.in), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("msgIDs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestSenderVerdict: Postmark's documented inbound payload (SPF passed,
// DKIM_VALID_AU) vouches for its From; each variant that takes a check
// away, or adds a header of the sender's own below Postmark's, does not.
func TestSenderVerdict(t *testing.T) {
	const spfPass = "Pass (sender SPF authorized) identity=mailfrom; client-ip=209.85.160.180; helo=mail-gy0-f180.google.com; envelope-from=myUser@theirDomain.com; receiver=451d9b70cf9364d23ff6f9d51d870251569e+ahoy@inbound.postmarkapp.com"
	bob := domain.Sender{Address: "bob@bob.com", How: "spf+dkim"}
	// set replaces the value of the topmost header called name, or
	// drops it when value is "".
	set := func(name, value string) func(*Inbound) {
		return func(in *Inbound) {
			for i, h := range in.Headers {
				if h.Name == name {
					if value == "" {
						in.Headers = append(in.Headers[:i], in.Headers[i+1:]...)
					} else {
						in.Headers[i].Value = value
					}
					return
				}
			}
			t.Fatalf("the documented payload has no %s header", name)
		}
	}
	// add puts a header the sender wrote below Postmark's.
	add := func(name, value string) func(*Inbound) {
		return func(in *Inbound) { in.Headers = append(in.Headers, Header{Name: name, Value: value}) }
	}
	cases := []struct {
		name    string
		changes []func(*Inbound)
		want    domain.Sender
	}{
		{name: "as documented: SPF pass, DKIM aligned", want: bob},
		{name: "SPF fail", changes: []func(*Inbound){set("Received-SPF", "Fail (sender not authorized) identity=mailfrom; client-ip=203.0.113.9"),
			set("X-Spam-Tests", "DKIM_SIGNED,DKIM_VALID,DKIM_VALID_AU,SPF_FAIL")}},
		{name: "SPF softfail", changes: []func(*Inbound){set("Received-SPF", "SoftFail (domain owner discourages use of this host) identity=mailfrom")}},
		{name: "Received-SPF fails though X-Spam-Tests has SPF_PASS", changes: []func(*Inbound){set("Received-SPF", "Neutral identity=mailfrom")}},
		{name: "no Received-SPF: X-Spam-Tests' SPF_PASS counts", changes: []func(*Inbound){set("Received-SPF", "")}, want: bob},
		{name: "no Received-SPF and no SPF_PASS", changes: []func(*Inbound){set("Received-SPF", ""), set("X-Spam-Tests", "DKIM_SIGNED,DKIM_VALID,DKIM_VALID_AU")}},
		{name: "lower-case pass, header name in another case", changes: []func(*Inbound){set("Received-SPF", ""), add("received-spf", "pass; identity=mailfrom")}, want: bob},
		{name: "DKIM missing", changes: []func(*Inbound){set("X-Spam-Tests", "SPF_PASS")}},
		{name: "DKIM_VALID without _AU: another domain's signature", changes: []func(*Inbound){set("X-Spam-Tests", "DKIM_SIGNED,DKIM_VALID,SPF_PASS")}},
		{name: "no X-Spam-Tests", changes: []func(*Inbound){set("X-Spam-Tests", "")}},
		{name: "X-Spam-Tests folded over lines", changes: []func(*Inbound){set("X-Spam-Tests", "DKIM_SIGNED,DKIM_VALID,\r\n\tDKIM_VALID_AU,SPF_PASS")}, want: bob},
		{name: "the sender's own Received-SPF: Pass below Postmark's Fail", changes: []func(*Inbound){
			set("Received-SPF", "Fail identity=mailfrom"), add("Received-SPF", spfPass)}},
		{name: "the sender's own X-Spam-Tests below Postmark's", changes: []func(*Inbound){
			set("X-Spam-Tests", "SPF_PASS"), add("X-Spam-Tests", "DKIM_SIGNED,DKIM_VALID,DKIM_VALID_AU,SPF_PASS")}},
		{name: "From is not an address", changes: []func(*Inbound){func(in *Inbound) { in.From, in.FromFull = "Bob Bobson", Address{} }}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := modify(t, "valid_http_post.json", func(in *Inbound) {
				for _, c := range tc.changes {
					c(in)
				}
			})
			m, err := ParseInbound(body)
			if err != nil {
				t.Fatal(err)
			}
			if m.Sender != tc.want {
				t.Errorf("sender = %+v, want %+v", m.Sender, tc.want)
			}
		})
	}
}
