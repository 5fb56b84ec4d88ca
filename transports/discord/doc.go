// Package discord connects streams of kind "discord" to Discord through
// one bot. A stream follows a guild channel (its threads too: threads are
// channels of their own) or one person's DMs with the bot.
//
// Inbound, the server holds a Gateway session (Run): Hello, Identify with
// the GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT intents,
// heartbeats, and on a dropped connection, Reconnect or a missed heartbeat
// ack a Resume from the last sequence number whose event is committed — a
// message is counted as received only once AppendInbound has stored it,
// so a crash or a failed write means Discord replays it, and its message
// id stores it once. Bots' messages (the bot's own included) are never
// stored. A message's thread is the thread channel it is in, or the
// message itself when it starts none: a thread started from a message has
// that message's id.
//
// Outbound, a Sender posts what workers publish with POST
// /channels/{id}/messages: in the thread of the message it answers,
// starting that thread from the message when there is none yet (POST
// /channels/{id}/messages/{mid}/threads), or in a DM (POST
// /users/@me/channels) as a reply (message_reference).
//
// The bot's token is operational config (transport.discord): one bot
// serves every channel it is in. Outbound requests go through safedial.
package discord
