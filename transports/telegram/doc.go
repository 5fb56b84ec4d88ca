// Package telegram connects streams of kind "telegram" to Telegram chats
// through one bot. A stream's config names one chat (and, optionally, one
// forum topic of it).
//
// Inbound, Telegram POSTs each update to /telegram/webhook (set with
// setWebhook and a secret_token); a request without the matching
// X-Telegram-Bot-Api-Secret-Token is refused before its body is read. A
// message in a chat a stream follows becomes an event there, stored once
// per update_id, so Telegram's redeliveries are duplicates; messages from
// bots are never stored.
//
// Outbound, a Sender sends what workers publish with sendMessage, as a
// reply (reply_to_message_id) to the message it answers and in its topic
// (message_thread_id). The bot token is in the URL Telegram's API takes,
// so it never appears in an error or a log.
//
// The bot's credentials are operational config (transport.telegram):
// one bot serves every chat it is in.
package telegram
