package email

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode"

	"github.com/helixml/helix-org/domain"
)

// Inbound is the JSON Postmark POSTs for each received message.
type Inbound struct {
	From              string       `json:"From"`
	FromName          string       `json:"FromName"`
	FromFull          Address      `json:"FromFull"`
	To                string       `json:"To"`
	ToFull            []Address    `json:"ToFull"`
	Cc                string       `json:"Cc"`
	CcFull            []Address    `json:"CcFull"`
	Bcc               string       `json:"Bcc"`
	BccFull           []Address    `json:"BccFull"`
	OriginalRecipient string       `json:"OriginalRecipient"`
	ReplyTo           string       `json:"ReplyTo"`
	Subject           string       `json:"Subject"`
	MessageID         string       `json:"MessageID"`
	Date              string       `json:"Date"`
	MailboxHash       string       `json:"MailboxHash"`
	TextBody          string       `json:"TextBody"`
	HtmlBody          string       `json:"HtmlBody"`
	StrippedTextReply string       `json:"StrippedTextReply"`
	MessageStream     string       `json:"MessageStream"`
	Headers           []Header     `json:"Headers"`
	Attachments       []Attachment `json:"Attachments"`
}

// Address is one of Postmark's parsed addresses.
type Address struct {
	Email       string `json:"Email"`
	Name        string `json:"Name"`
	MailboxHash string `json:"MailboxHash"`
}

// Header is one raw email header.
type Header struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// Attachment is a file, its content base64-encoded.
type Attachment struct {
	Name          string `json:"Name"`
	Content       string `json:"Content"`
	ContentType   string `json:"ContentType"`
	ContentLength int64  `json:"ContentLength"`
	ContentID     string `json:"ContentID"`
}

// Mail is an inbound message ready to store.
type Mail struct {
	// Alias routes it to the email stream with that alias; "" when it was
	// addressed to no alias.
	Alias string
	// DedupKey is Postmark's MessageID, the same on every retry.
	DedupKey string
	Message  domain.Message
	// Contents[i] is the decoded content of Message.Attachments[i].
	Contents [][]byte
	// Sender is From when Postmark's checks say it is the sender's
	// (verdict); the zero Sender otherwise.
	Sender domain.Sender
}

// FullTextAttachment carries an email's whole text when body holds only
// the stripped reply and the text is too large for extra.
const FullTextAttachment = "full-text.txt"

// extra is what the envelope keeps beyond its own fields.
type extra struct {
	PostmarkMessageID string   `json:"postmarkMessageId,omitempty"`
	FromName          string   `json:"fromName,omitempty"`
	ReplyTo           string   `json:"replyTo,omitempty"`
	Cc                []string `json:"cc,omitempty"`
	OriginalRecipient string   `json:"originalRecipient,omitempty"`
	Date              string   `json:"date,omitempty"`
	References        []string `json:"references,omitempty"`
	// TextBody is the whole text when body holds only the stripped reply.
	TextBody string `json:"textBody,omitempty"`
}

// ParseInbound maps Postmark's inbound JSON to the envelope:
//   - from = the sender's address, to = the To addresses;
//   - body = StrippedTextReply when Postmark found a reply in the text,
//     else TextBody, else HtmlBody (bodyContentType text/html);
//   - messageId = the Message-ID header (Postmark's MessageID when absent),
//     inReplyTo = In-Reply-To, threadId = the first (root) References id,
//     else In-Reply-To, else the message's own id, so a conversation is one
//     thread whichever client answered;
//   - attachments = name, type and decoded size; contents returned apart;
//   - a message with attachments but no text gets the body
//     "(no text; attachments: a.pdf, b.png)"; one with neither is refused;
//   - the whole text, when body holds only the stripped reply and the text
//     is too large for extra, is the attachment FullTextAttachment.
func ParseInbound(body []byte) (Mail, error) {
	var in Inbound
	if err := json.Unmarshal(body, &in); err != nil {
		return Mail{}, fmt.Errorf("not Postmark inbound JSON: %w", err)
	}
	m := domain.Message{From: sender(in), Subject: in.Subject, BodyContentType: "text/plain"}
	for _, a := range in.ToFull {
		m.To = append(m.To, a.Email)
	}
	x := extra{PostmarkMessageID: in.MessageID, FromName: in.FromFull.Name, ReplyTo: replyTo(in.ReplyTo),
		OriginalRecipient: in.OriginalRecipient, Date: in.Date, References: msgIDs(header(in.Headers, "References"))}
	for _, a := range in.CcFull {
		x.Cc = append(x.Cc, a.Email)
	}
	switch {
	case strings.TrimSpace(in.StrippedTextReply) != "":
		m.Body, x.TextBody = in.StrippedTextReply, in.TextBody
	case strings.TrimSpace(in.TextBody) != "" || strings.TrimSpace(in.HtmlBody) == "":
		m.Body = in.TextBody
	default:
		m.Body, m.BodyContentType = in.HtmlBody, "text/html"
	}
	if strings.TrimSpace(m.Body) == "" && len(in.Attachments) == 0 {
		return Mail{}, domain.Invalid("body", "is required: the email has no text (TextBody, HtmlBody and StrippedTextReply are empty) and no attachments; nothing was stored")
	}
	m.MessageID = first(msgIDs(header(in.Headers, "Message-ID")), in.MessageID)
	m.InReplyTo = first(msgIDs(header(in.Headers, "In-Reply-To")), "")
	m.ThreadID = first(x.References, first([]string{m.InReplyTo}, m.MessageID))
	var contents [][]byte
	for i, a := range in.Attachments {
		c, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return Mail{}, fmt.Errorf("attachment %d (%q): content is not base64: %w", i, a.Name, err)
		}
		name := a.Name
		if name == "" {
			name = fmt.Sprintf("attachment-%d", i+1)
		}
		m.Attachments = append(m.Attachments, domain.Attachment{Name: name, ContentType: a.ContentType, Size: int64(len(c))})
		contents = append(contents, c)
	}
	if strings.TrimSpace(m.Body) == "" {
		names := make([]string, len(m.Attachments))
		for i, a := range m.Attachments {
			names[i] = a.Name
		}
		m.Body = "(no text; attachments: " + strings.Join(names, ", ") + ")"
	}
	var err error
	if m.Extra, err = json.Marshal(x); err != nil {
		return Mail{}, err
	}
	if len(m.Extra) > domain.MaxExtra && x.TextBody != "" {
		m.Attachments = append(m.Attachments, domain.Attachment{Name: FullTextAttachment, ContentType: "text/plain; charset=utf-8", Size: int64(len(x.TextBody))})
		contents = append(contents, []byte(x.TextBody))
		x.TextBody = ""
		if m.Extra, err = json.Marshal(x); err != nil {
			return Mail{}, err
		}
	}
	return Mail{Alias: alias(in), DedupKey: in.MessageID, Message: m, Contents: contents, Sender: verdict(in.Headers, m.From)}, nil
}

// verdict vouches for from when Postmark's checks passed: SPF (the
// topmost Received-SPF says Pass, or there is none and SpamAssassin's
// X-Spam-Tests has SPF_PASS) and a DKIM signature by from's own domain
// (DKIM_VALID_AU; DKIM_VALID alone may be any domain's signature). Only
// the topmost of each header counts: Postmark's servers add theirs on
// top, a sender's own comes below, and SpamAssassin drops X-Spam-*
// headers it did not write.
func verdict(hs []Header, from string) domain.Sender {
	tests := strings.FieldsFunc(header(hs, "X-Spam-Tests"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	spf := slices.Contains(tests, "SPF_PASS")
	if received, ok := headerOK(hs, "Received-SPF"); ok {
		result := strings.FieldsFunc(received, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == ';' })
		spf = len(result) > 0 && strings.EqualFold(result[0], "pass")
	}
	if !spf || !slices.Contains(tests, "DKIM_VALID_AU") || !emailAddress().MatchString(from) {
		return domain.Sender{}
	}
	return domain.Sender{Address: from, How: "spf+dkim"}
}

// sender is the sender's bare address.
func sender(in Inbound) string {
	if in.FromFull.Email != "" {
		return in.FromFull.Email
	}
	if a, err := mail.ParseAddress(in.From); err == nil {
		return a.Address
	}
	return in.From
}

func replyTo(v string) string {
	if a, err := mail.ParseAddress(v); err == nil {
		return a.Address
	}
	return strings.TrimSpace(v)
}

// alias is the plus-part the message was delivered to: OriginalRecipient
// first (the envelope recipient), then Postmark's MailboxHash, then any
// recipient's MailboxHash. It is lower-cased: aliases are lowercase.
func alias(in Inbound) string {
	if local, _, ok := strings.Cut(in.OriginalRecipient, "@"); ok {
		if _, hash, ok := strings.Cut(local, "+"); ok && hash != "" {
			return strings.ToLower(hash)
		}
	}
	if in.MailboxHash != "" {
		return strings.ToLower(in.MailboxHash)
	}
	for _, list := range [][]Address{in.ToFull, in.CcFull, in.BccFull} {
		for _, a := range list {
			if a.MailboxHash != "" {
				return strings.ToLower(a.MailboxHash)
			}
		}
	}
	return ""
}

// header is the topmost header called name, "" when there is none.
func header(hs []Header, name string) string {
	v, _ := headerOK(hs, name)
	return v
}

func headerOK(hs []Header, name string) (string, bool) {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value, true
		}
	}
	return "", false
}

// msgIDs extracts the <id> tokens of a Message-ID, In-Reply-To or
// References header, in order; a header without brackets is split on
// whitespace.
func msgIDs(v string) []string {
	var ids []string
	for rest := v; ; {
		open := strings.IndexByte(rest, '<')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '>')
		if end < 0 {
			break
		}
		if id := rest[open : open+end+1]; len(id) > 2 {
			ids = append(ids, id)
		}
		rest = rest[open+end+1:]
	}
	if len(ids) == 0 {
		ids = strings.Fields(v)
	}
	return ids
}

func first(list []string, def string) string {
	for _, s := range list {
		if s != "" {
			return s
		}
	}
	return def
}
