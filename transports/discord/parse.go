package discord

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// message is the part of a Discord message object the transport reads.
type message struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Type      int    `json:"type"`
	Content   string `json:"content"`
	Timestamp string `json:"timestamp"`
	WebhookID string `json:"webhook_id"`
	Author    struct {
		ID         string `json:"id"`
		Username   string `json:"username"`
		GlobalName string `json:"global_name"`
		Bot        bool   `json:"bot"`
	} `json:"author"`
	Reference *struct {
		MessageID string `json:"message_id"`
		ChannelID string `json:"channel_id"`
	} `json:"message_reference"`
	Attachments []struct {
		Filename string `json:"filename"`
		URL      string `json:"url"`
	} `json:"attachments"`
}

// storedTypes are the message types people write: DEFAULT and REPLY. The
// rest (joins, pins, thread notices…) are not messages to a stream.
var storedTypes = map[int]bool{0: true, 19: true}

// skip says why a message is not stored, "" when it is.
func skip(m message, botID string) string {
	switch {
	case m.Author.Bot || m.WebhookID != "" || (botID != "" && m.Author.ID == botID):
		return "a bot's message"
	case !storedTypes[m.Type]:
		return "not a message people write"
	case strings.TrimSpace(m.Content) == "" && len(m.Attachments) == 0:
		return "no text (is the Message Content intent enabled?)"
	}
	return ""
}

// parentFunc finds the channel a thread belongs to ("" for none).
type parentFunc func(ctx context.Context, channelID string) string

// route returns the messages to store: one for each stream that follows
// the channel, the thread's channel, or the DM's person.
func route(ctx context.Context, streams []domain.Stream, m message, parentOf parentFunc) []domain.Inbound {
	var out []domain.Inbound
	parent, looked := "", false
	for _, s := range streams {
		var c StreamConfig
		if json.Unmarshal(s.Transport.Config, &c) != nil {
			continue
		}
		inThread := false
		switch {
		case c.User != "":
			if m.GuildID != "" || m.Author.ID != c.User {
				continue
			}
		case c.Channel == m.ChannelID:
		case m.GuildID == "":
			continue
		default:
			if !looked {
				parent, looked = parentOf(ctx, m.ChannelID), true
			}
			if parent != c.Channel {
				continue
			}
			inThread = true
		}
		out = append(out, domain.Inbound{StreamID: s.ID, Message: envelope(m, inThread, parent), Key: m.ID,
			Sender: domain.Sender{Address: m.Author.ID, How: "discord-user"}})
	}
	return out
}

// envelope is a Discord message as a Message: messageId its id; its
// thread the thread channel it is in, else the message it replies to,
// else itself (a thread started from it takes its id), so a worker's
// answer lands in that thread.
func envelope(m message, inThread bool, parent string) domain.Message {
	out := domain.Message{From: m.Author.Username, Body: m.Content, BodyContentType: "text/markdown", MessageID: m.ID}
	if strings.TrimSpace(out.Body) == "" {
		var names []string
		for _, a := range m.Attachments {
			names = append(names, a.Filename)
		}
		out.Body = "(no text; attachments: " + strings.Join(names, ", ") + ")"
	}
	if m.Reference != nil && m.Reference.MessageID != "" {
		out.InReplyTo = m.Reference.MessageID
	}
	switch {
	case inThread:
		out.ThreadID = m.ChannelID
	case out.InReplyTo != "":
		out.ThreadID = out.InReplyTo
	default:
		out.ThreadID = m.ID
	}
	extra := map[string]any{"channel_id": m.ChannelID, "message_id": m.ID, "author_id": m.Author.ID,
		"author": m.Author.GlobalName, "timestamp": m.Timestamp, "in_thread": inThread}
	if m.GuildID != "" {
		extra["guild_id"] = m.GuildID
	}
	if inThread {
		extra["parent_id"] = parent
	}
	if len(m.Attachments) > 0 {
		extra["attachments"] = m.Attachments
	}
	out.Extra, _ = json.Marshal(extra)
	return out
}
