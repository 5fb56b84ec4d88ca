// Package slack connects streams of kind "slack" to Slack. A stream's
// config names one channel (and, optionally, one thread of it), or one
// worker: a worker's stream takes the messages that name the worker and
// the rest of each thread it is in.
//
// Inbound, events arrive either by the Events API — Slack POSTs to
// /slack/events, every request verified with the app's signing secret
// (X-Slack-Signature, v0 HMAC over v0:{timestamp}:{body}, timestamps
// within five minutes) before its body is parsed, url_verification
// answered with its challenge — or over Socket Mode (SocketMode), a
// WebSocket the server opens with the app-level token, each envelope
// acknowledged once what it carries is committed. Either way a message in
// a channel a stream follows becomes an event there, its thread as
// threadId, stored once per event_id so Slack's retries are duplicates;
// the bot's own messages (bot_id, or the bot's user id) are never stored.
//
// Outbound, a Sender posts what workers publish with chat.postMessage and
// the app's bot token, in the thread the message answers.
//
// The app's credentials are operational config (transport.slack), never a
// stream's: one Slack app serves every channel. The owner can install the
// app through OAuth (Install), which stores the bot token; Manifest is the
// app manifest to create the app from.
package slack
