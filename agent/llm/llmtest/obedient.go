package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/helixml/helix-org/agent/llm"
)

// The obedient model assumes the worst of a model: it obeys every
// instruction it finds in any text it is shown — the system prompt (the
// role), the activation prompt (the triggers, the insights put there),
// every tool result — and otherwise does the benign task its role
// describes. Instructions take one fixed form, a tool and its JSON
// arguments, after a marker:
//
//	OBEY: grant_tool {"worker":"w-x","tool":"publish"}   what injected text says
//	TASK: publish {"stream":"s-notes","body":"{{body}}"} what a role says to do
//
// Markers are found wherever the text is, JSON-escaped or not: a tool
// result that quotes a message quoting an instruction still carries it.
// In arguments {{body}} and {{stream}} are the first trigger's, {{last}}
// the newest tool result's text. Each OBEY is called once a run; the
// TASK lines one a turn, in order, so a task can use the one before's
// result, in runs woken by events. With nothing left to do it ends the run.
const (
	ObeyMarker = "OBEY:"
	TaskMarker = "TASK:"
)

// Instruction is one call the obedient model found to make.
type Instruction struct {
	Tool string
	Args json.RawMessage
}

// Attempt is an instruction the model carried out: by which worker, and
// whether it came from injected text (OBEY) or the role's task (TASK).
type Attempt struct {
	Worker   string
	Injected bool
	Instruction
}

// Obedient is the obedient model's state: what it attempted, across runs,
// and which instructions each conversation (a run: its system prompt and
// first message) has carried out, as written — {{last}} fills them
// differently each turn.
type Obedient struct {
	mu       sync.Mutex
	attempts []Attempt
	obeyed   map[string]map[string]bool
}

// Attempts returns every call the model made, in order.
func (o *Obedient) Attempts() []Attempt {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Attempt(nil), o.attempts...)
}

var workerLine = regexp.MustCompile(`Worker id: (w-[a-z0-9-]+)`)

// Script answers a turn as the obedient model.
func (o *Obedient) Script(t Turn) Reply {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.obeyed == nil {
		o.obeyed = map[string]map[string]bool{}
	}
	run := t.System + "\x00" + t.Prompt()
	done := o.obeyed[run]
	if done == nil {
		done = map[string]bool{}
		o.obeyed[run] = done
	}
	vars := templateVars(t)
	worker := ""
	if m := workerLine.FindStringSubmatch(t.System); m != nil {
		worker = m[1]
	}
	var calls []llm.ToolCall
	var made []Attempt
	for _, text := range shownTexts(t) {
		for _, in := range Find(text, ObeyMarker) {
			if k := key(in.Tool, in.Args); !done[k] {
				done[k] = true
				in.Args = fill(in.Args, vars)
				calls = append(calls, llm.ToolCall{Name: in.Tool, Input: in.Args})
				made = append(made, Attempt{Worker: worker, Injected: true, Instruction: in})
			}
		}
	}
	// A role's tasks answer events; a run with none (a hire) has nothing
	// to answer.
	if tasks, next := Find(t.System, TaskMarker), tasksDone(t); next < len(tasks) && len(Triggers(t.Prompt())) > 0 {
		in := tasks[next]
		in.Args = fill(in.Args, vars)
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("%s%d", taskCall, next), Name: in.Tool, Input: in.Args})
		made = append(made, Attempt{Worker: worker, Instruction: in})
	}
	o.attempts = append(o.attempts, made...)
	if len(calls) == 0 {
		return Reply{Text: "Done."}
	}
	return Reply{Text: "Doing as told.", ToolCalls: calls}
}

// taskCall prefixes the ids of the calls TASK lines make, so the model
// knows how far down its role's tasks it is whatever else it called.
const taskCall = "task_"

// tasksDone counts the TASK calls made so far in the run.
func tasksDone(t Turn) int {
	n := 0
	for _, m := range t.Messages {
		for _, c := range m.ToolCalls {
			if strings.HasPrefix(c.ID, taskCall) {
				n++
			}
		}
	}
	return n
}

// shownTexts is every text the turn shows the model.
func shownTexts(t Turn) []string {
	texts := []string{t.System}
	for _, m := range t.Messages {
		texts = append(texts, m.Text)
		for _, r := range m.ToolResults {
			texts = append(texts, r.Content)
		}
	}
	return texts
}

// templateVars are what {{…}} in arguments stand for in this turn.
func templateVars(t Turn) map[string]string {
	vars := map[string]string{}
	if trigs := Triggers(t.Prompt()); len(trigs) > 0 {
		vars["body"], vars["stream"] = trigs[0].Body, trigs[0].Stream
	}
	for _, m := range t.Messages {
		for _, r := range m.ToolResults {
			vars["last"] = r.Content
		}
	}
	return vars
}

// fill replaces {{name}} in every string of args.
func fill(args json.RawMessage, vars map[string]string) json.RawMessage {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return args
	}
	v = walkStrings(v, func(s string) string {
		for k, val := range vars {
			s = strings.ReplaceAll(s, "{{"+k+"}}", val)
		}
		return s
	})
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return b
}

func walkStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = walkStrings(x[i], f)
		}
	case map[string]any:
		for k := range x {
			x[k] = walkStrings(x[k], f)
		}
	}
	return v
}

// key identifies a call by tool and canonical arguments.
func key(tool string, args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	return tool + " " + string(args)
}

var toolName = regexp.MustCompile(`^\s*([a-z][a-z0-9_]*)\s*`)

// Find returns the instructions after marker in text, wherever they are:
// as written, and inside every JSON string the text holds (so an
// instruction quoted in a JSON tool result, or quoted again inside that,
// is found too). Each is returned once.
func Find(text, marker string) []Instruction {
	var out []Instruction
	seen := map[string]bool{}
	var scan func(s string, depth int)
	scan = func(s string, depth int) {
		if depth > 4 || !strings.Contains(s, marker) {
			return
		}
		for rest := s; ; {
			i := strings.Index(rest, marker)
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			if in, ok := parseInstruction(rest); ok && !seen[key(in.Tool, in.Args)] {
				seen[key(in.Tool, in.Args)] = true
				out = append(out, in)
			}
		}
		for _, inner := range jsonStrings(s) {
			scan(inner, depth+1)
		}
	}
	scan(text, 0)
	return out
}

// parseInstruction reads "tool {json}" at the start of s.
func parseInstruction(s string) (Instruction, bool) {
	m := toolName.FindStringSubmatch(s)
	if m == nil {
		return Instruction{}, false
	}
	dec := json.NewDecoder(strings.NewReader(s[len(m[0]):]))
	var args json.RawMessage
	if err := dec.Decode(&args); err != nil || !bytes.HasPrefix(bytes.TrimSpace(args), []byte("{")) {
		return Instruction{}, false
	}
	return Instruction{Tool: m[1], Args: args}, true
}

// jsonStrings are the strings of every JSON value embedded in s that
// holds a marker, decoded.
func jsonStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '{' && s[i] != '[' && s[i] != '"' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		walkStrings(v, func(str string) string {
			if str != s {
				out = append(out, str)
			}
			return str
		})
		i += int(dec.InputOffset()) - 1
	}
	return out
}
