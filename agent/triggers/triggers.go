// Package triggers reads the event triggers back out of an activation
// prompt as dispatch.RenderPrompt writes it: what a model reads there, for
// agents that follow rules instead of a model (the example runtime) and
// for scripted models in tests.
package triggers

import (
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Trigger is one event trigger of a prompt: its event and stream, the
// envelope fields a model routes by, and the body.
type Trigger struct {
	Event, Stream, Body string
	// Source is the publishing worker's id, empty for the outside world.
	Source                      string
	From, Subject, ThreadID, To string
}

var eventLine = domain.LazyRegexp(`^\[\d+/\d+\] event (\S+) on stream (\S+) `)

// Parse reads the event triggers out of a prompt; a hire is not one.
func Parse(prompt string) []Trigger {
	var out []Trigger
	var cur *Trigger
	inBody := false
	for _, line := range strings.Split(prompt, "\n") {
		if m := eventLine().FindStringSubmatch(line); m != nil {
			out = append(out, Trigger{Event: m[1], Stream: m[2]})
			cur, inBody = &out[len(out)-1], false
			continue
		}
		switch {
		case strings.HasPrefix(line, "["):
			cur = nil
		case cur == nil:
		case line == "  body:":
			inBody = true
		case !inBody:
			cur.header(line)
		case strings.HasPrefix(line, "    "):
			if cur.Body != "" {
				cur.Body += "\n"
			}
			cur.Body += strings.TrimPrefix(line, "    ")
		default:
			// The body ends where the prompt's next section begins.
			cur, inBody = nil, false
		}
	}
	return out
}

// header records one "  key: value" line of a trigger.
func (t *Trigger) header(line string) {
	k, v, ok := strings.Cut(strings.TrimPrefix(line, "  "), ": ")
	if !ok {
		return
	}
	switch k {
	case "source":
		if id, _, _ := strings.Cut(v, " "); strings.HasPrefix(id, "w-") {
			t.Source = id
		}
	case "from":
		t.From = v
	case "to":
		t.To = v
	case "subject":
		t.Subject = v
	case "threadId":
		t.ThreadID = v
	}
}

// replyRule is a role's rule for the example agent: the first backticked
// text holding <body> (as is) or <BODY…> (upper-cased), e.g. "reply
// `echo: <body>` on the same stream".
var (
	replyRule = domain.LazyRegexp("`([^`]*<(?:body|BODY[^>]*)>[^`]*)`")
	upperBody = domain.LazyRegexp(`<BODY[^>]*>`)
)

// RoleReply is the reply a role's rule gives to t, found in text (role.md,
// or a system prompt that holds it); ok is false when it has no rule.
func RoleReply(text string, t Trigger) (reply string, ok bool) {
	m := replyRule().FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	reply = strings.ReplaceAll(m[1], "<body>", t.Body)
	return upperBody().ReplaceAllLiteralString(reply, strings.ToUpper(t.Body)), true
}
