package dispatch

import (
	"fmt"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// RenderPrompt is the activation's prompt: which files to read, then every
// populated envelope field of every trigger, numbered, then the insights
// recalled for them.
func RenderPrompt(w domain.Worker, act domain.Activation, trigs []domain.Trigger, mem []PromptInsight) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s (%s), a worker in a helix-org organisation. This is activation %s.\n\n", w.Name, w.ID, act.ID)
	b.WriteString("Read these files in your working directory first:\n" +
		"- role.md: your role, the job you do\n" +
		"- identity.md: who you are\n" +
		"- agent.md: how to act on a trigger\n" +
		"Act only through your helix-org MCP tools (configured in mcp.json).\n\n")
	fmt.Fprintf(&b, "You were woken by %d trigger(s):\n", len(trigs))
	for i, t := range trigs {
		fmt.Fprintf(&b, "\n[%d/%d] ", i+1, len(trigs))
		writeTrigger(&b, t)
	}
	writeInsights(&b, mem)
	return b.String()
}

func writeTrigger(b *strings.Builder, t domain.Trigger) {
	ev := t.Event
	if t.Kind == domain.TriggerHire {
		fmt.Fprintf(b, "You have just been hired (event %s on %s). Set yourself up as your role says.\n", ev.ID, ev.StreamID)
	} else {
		fmt.Fprintf(b, "event %s on stream %s (seq %d, %s)\n", ev.ID, ev.StreamID, ev.Seq, ev.CreatedAt.Format("2006-01-02T15:04:05Z"))
	}
	source := ev.Source
	if source == "" {
		source = "(outside world / system)"
	}
	field(b, "source", fmt.Sprintf("%s (%s)", source, ev.SourceKind))
	if ev.CausedBy != "" {
		field(b, "causedBy", ev.CausedBy)
	}
	m := ev.Message
	field(b, "from", m.From)
	if len(m.To) > 0 {
		field(b, "to", strings.Join(m.To, ", "))
	}
	field(b, "subject", m.Subject)
	field(b, "threadId", m.ThreadID)
	field(b, "inReplyTo", m.InReplyTo)
	field(b, "messageId", m.MessageID)
	field(b, "bodyContentType", m.BodyContentType)
	for _, a := range m.Attachments {
		field(b, "attachment", fmt.Sprintf("%s (%s, %d bytes) %s", a.Name, a.ContentType, a.Size, a.Ref))
	}
	if len(m.Extra) > 0 {
		field(b, "extra", string(m.Extra))
	}
	b.WriteString("  body:\n")
	for _, line := range strings.Split(m.Body, "\n") {
		b.WriteString("    " + line + "\n")
	}
}

func field(b *strings.Builder, name, value string) {
	if value != "" {
		fmt.Fprintf(b, "  %s: %s\n", name, value)
	}
}

// SteeringPrompt renders the messages sent to the worker's earlier runs
// (message_activation) that no run read while it ran: "" when none.
func SteeringPrompt(msgs []domain.SteerMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nYour managers sent %d message(s) to your previous run, which ended before reading them; act on them too:\n", len(msgs))
	for i, m := range msgs {
		fmt.Fprintf(&b, "\n[message %d/%d] from %s to run %s (%s):\n", i+1, len(msgs), m.From, m.ActivationID, m.SentAt.Format("2006-01-02T15:04:05Z"))
		for line := range strings.SplitSeq(m.Body, "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}
