// Package slack connects streams of kind "slack" to Slack channels. A
// stream's config names one channel (and, optionally, one thread of it).
//
// Inbound, Slack's Events API POSTs to /slack/events: every request is
// verified with the app's signing secret (X-Slack-Signature, v0 HMAC over
// v0:{timestamp}:{body}, timestamps within five minutes) before its body
// is parsed; url_verification is answered with its challenge; a message
// in a channel a stream follows becomes an event there, its thread as
// threadId, stored once per event_id so Slack's retries are duplicates;
// the bot's own messages (bot_id, or the bot's user id) are never stored.
//
// Outbound, a Sender posts what workers publish with chat.postMessage and
// the app's bot token, in the thread the message answers.
//
// The app's credentials are operational config (transport.slack), never a
// stream's: one Slack app serves every channel.
package slack
