// Package email connects email streams to Postmark. Inbound, Postmark
// POSTs each received message as JSON to /email/postmark (behind basic
// auth); it is routed by the alias in <hash>+<alias>@inbound.postmarkapp.com
// to the email stream with that alias and stored once per Postmark
// MessageID, attachments included, with From vouched for
// (domain.Inbound.Sender) only when Postmark's SPF and author-aligned DKIM
// verdicts in its headers passed. Outbound, a Sender for the delivery
// engine sends what workers publish on an email stream through Postmark's
// email API, with Reply-To at the stream's alias address and In-Reply-To /
// References set so the customer's answer returns to the same stream and
// thread.
//
// It holds no state of its own and never logs or answers with a secret
// from transport.postmark.
package email
