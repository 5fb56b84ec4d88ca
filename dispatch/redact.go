package dispatch

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// Direct messages stay between their two members, but an agent's activation
// log is read by the workers above it. So before an entry is appended —
// whatever runtime wrote it — DM content in it becomes a reference the
// members can follow: the text of a dm call (or a publish to a DM stream),
// and every event of an s-dm- stream in a tool result. Tool results are
// parsed as JSON; one that cannot be parsed but mentions a DM stream is
// withheld whole rather than guessed at.
func redactDM(worker string, e domain.LogEntry) domain.LogEntry {
	switch {
	case e.Kind == domain.LogToolCall:
		e.Text = redactDMCall(worker, e.Tool, e.Text)
	case strings.Contains(e.Text, domain.DMStreamPrefix):
		e.Text = redactDMEvents(e.Kind, e.Text)
	}
	return e
}

// isDMTool matches the dm tool under the names runtimes give it: "dm"
// (the built-in agent) or "mcp__<server>__dm" (Claude Code).
func isDMTool(name string) bool { return name == "dm" || strings.HasSuffix(name, "__dm") }

func redactDMCall(worker, tool, text string) string {
	var args struct {
		To     string `json:"to"`
		Stream string `json:"stream"`
	}
	parsed := json.Unmarshal([]byte(text), &args) == nil
	switch {
	case isDMTool(tool) && parsed && args.To != "":
		return fmt.Sprintf("dm to %s: message withheld from this log; its two members read it on %s", args.To, domain.DMStreamID(worker, args.To))
	case isDMTool(tool):
		return "dm: message withheld from this log; its two members read it on their DM stream"
	case parsed && domain.IsDM(args.Stream):
		return fmt.Sprintf("%s to %s: message withheld from this log; its two members read it there", tool, args.Stream)
	case !parsed && strings.Contains(text, domain.DMStreamPrefix):
		return fmt.Sprintf("%s: arguments withheld from this log: they mention %s", tool, strings.Join(dmStreamsIn(text), ", "))
	}
	return text
}

func redactDMEvents(kind domain.LogKind, text string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		// Our tools' error texts name DM streams but never carry a message.
		if kind != domain.LogToolResult || strings.HasPrefix(text, "error: ") {
			return text
		}
		return fmt.Sprintf("tool result withheld from this log: it is not JSON and mentions %s; the members read the DM there", strings.Join(dmStreamsIn(text), ", "))
	}
	refs := map[string][]int64{}
	v = stripDMEvents(v, refs)
	if len(refs) == 0 {
		return text
	}
	rest, err := json.Marshal(v)
	if err != nil {
		return "entry withheld from this log: it held direct messages"
	}
	noun := "tool result"
	if kind != domain.LogToolResult {
		noun = string(kind)
	}
	return noun + " held " + dmSummary(refs) + "\n" + string(rest)
}

// stripDMEvents replaces every event of a DM stream inside v (an object
// with a streamId starting s-dm- and a message) with a short placeholder,
// recording its stream and seq.
func stripDMEvents(v any, refs map[string][]int64) any {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["streamId"].(string); ok && domain.IsDM(id) {
			if _, isEvent := x["message"]; isEvent {
				n, _ := x["seq"].(json.Number)
				seq, _ := n.Int64()
				refs[id] = append(refs[id], seq)
				return fmt.Sprintf("(direct message %d on %s: withheld)", seq, id)
			}
		}
		for k, c := range x {
			x[k] = stripDMEvents(c, refs)
		}
	case []any:
		for i, c := range x {
			x[i] = stripDMEvents(c, refs)
		}
	}
	return v
}

// dmSummary: "3 message(s) from s-dm-a-b (seq 41–43); read them there".
func dmSummary(refs map[string][]int64) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(refs)) {
		seqs := refs[id]
		slices.Sort(seqs)
		span := fmt.Sprintf("seq %d", seqs[0])
		if last := seqs[len(seqs)-1]; last != seqs[0] {
			span = fmt.Sprintf("seq %d–%d", seqs[0], last)
		}
		parts = append(parts, fmt.Sprintf("%d message(s) from %s (%s)", len(seqs), id, span))
	}
	return strings.Join(parts, "; ") + "; read them there"
}

var dmStreamID = domain.LazyRegexp(domain.DMStreamPrefix + `[a-z0-9-]+`)

func dmStreamsIn(text string) []string {
	ids := dmStreamID().FindAllString(text, -1)
	slices.Sort(ids)
	return slices.Compact(ids)
}
