package processor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/dispatch/processor"
	"github.com/helixml/helix-org/domain"
)

func event(subject, body, extra string) processor.Input {
	return processor.Input{StreamKind: "github", Event: domain.Event{ID: "e-1", StreamID: "s-in", SourceKind: domain.SourceSystem,
		Message: domain.Message{Subject: subject, Body: body, Extra: json.RawMessage(extra)}, Label: domain.Untrusted("github event")}}
}

func proc(kind, config string, outputs ...string) domain.Processor {
	return domain.Processor{ID: "proc-t", Input: "s-in", Kind: domain.ProcessorKind(kind), Config: json.RawMessage(config), Outputs: outputs}
}

func TestRun(t *testing.T) {
	opened := event("Invoice 12", "pay me", `{"action":"opened","labels":["bug","urgent"],"n":3}`)
	closed := event("Re: lunch", "noon?", `{"action":"closed"}`)
	route := proc("route", `{"routes":[{"expr":"message.extra.action == \"opened\"","output":"s-open"},{"expr":"message.subject.startsWith(\"Re:\")","output":"s-re"}],"default":"s-rest"}`)
	for _, tc := range []struct {
		name string
		p    domain.Processor
		in   processor.Input
		want []domain.ProcessorOutput
	}{
		{"filter keeps a match", proc("filter", `{"expr":"message.subject.contains(\"Invoice\")"}`, "s-out"), opened,
			[]domain.ProcessorOutput{{Stream: "s-out", Message: opened.Event.Message}}},
		{"filter drops the rest", proc("filter", `{"expr":"message.subject.contains(\"Invoice\")"}`, "s-out"), closed, nil},
		{"filter on source and extra", proc("filter", `{"expr":"source.kind == \"github\" && message.extra.action == \"opened\" && label.untrusted"}`, "s-out"), opened,
			[]domain.ProcessorOutput{{Stream: "s-out", Message: opened.Event.Message}}},
		{"route: first match", route, opened, []domain.ProcessorOutput{{Stream: "s-open", Message: opened.Event.Message}}},
		{"route: second match", route, closed, []domain.ProcessorOutput{{Stream: "s-re", Message: closed.Event.Message}}},
		{"route: default", route, event("x", "y", `{"action":"edited"}`), []domain.ProcessorOutput{{Stream: "s-rest", Message: domain.Message{Subject: "x", Body: "y", Extra: json.RawMessage(`{"action":"edited"}`)}}}},
		{"route without default drops", proc("route", `{"routes":[{"expr":"false","output":"s-a"}]}`), opened, nil},
		{"transform", proc("transform", `{"subject":"message.extra.action.upperAscii() + \": \" + message.subject","extra":"{\"tags\": message.extra.labels, \"count\": message.extra.n + 1.0}"}`, "s-out"), opened,
			[]domain.ProcessorOutput{{Stream: "s-out", Message: domain.Message{Subject: "OPENED: Invoice 12", Body: "pay me", Extra: json.RawMessage(`{"count":4,"tags":["bug","urgent"]}`)}}}},
		{"template", proc("template", `{"subject":"[{{.source.kind}}] {{.message.subject}}","body":"{{.message.extra.action}}:{{range .message.extra.labels}} {{.}}{{end}}"}`, "s-out"), opened,
			[]domain.ProcessorOutput{{Stream: "s-out", Message: domain.Message{Subject: "[github] Invoice 12", Body: "opened: bug urgent", Extra: opened.Event.Message.Extra}}}},
		{"truncate at a character boundary", proc("truncate", `{"max_bytes":4}`, "s-out"), event("s", "héllo", ""),
			[]domain.ProcessorOutput{{Stream: "s-out", Message: domain.Message{Subject: "s", Body: "hél"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := processor.Compile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pr.Run(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEq(a, b) })); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}

func jsonEq(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    domain.Processor
		want []string
	}{
		{"unknown kind", proc("javascript", `{}`, "s-out"), []string{`kind: unknown processor kind "javascript"`, "filter", "route", "transform", "template", "truncate"}},
		{"syntax error names the position", proc("filter", `{"expr":"message.subject.contains(\"x\") &&"}`, "s-out"),
			[]string{"config.expr: does not compile", "config.expr:1:33: Syntax error"}},
		{"unknown field names the position", proc("filter", `{"expr":"message.subjct == \"a\""}`, "s-out"),
			[]string{"config.expr:1:8: undefined field 'subjct'"}},
		{"a route's bad expression names the route", proc("route", `{"routes":[{"expr":"true","output":"s-a"},{"expr":"nosuch > 1","output":"s-b"}]}`),
			[]string{"config.routes[1].expr:1:1: undeclared reference to 'nosuch'"}},
		{"filter not a bool", proc("filter", `{"expr":"message.subject"}`, "s-out"), []string{"config.expr: is of type string; it must be bool"}},
		{"transform body not a string", proc("transform", `{"body":"size(message.body)"}`, "s-out"), []string{"config.body: is of type int; it must be string"}},
		{"transform of nothing", proc("transform", `{}`, "s-out"), []string{"config: sets none of subject, body and extra"}},
		{"unknown config field", proc("filter", `{"exp":"true"}`, "s-out"), []string{"config: must be", `unknown field "exp"`}},
		{"two outputs for a filter", proc("filter", `{"expr":"true"}`, "s-a", "s-b"), []string{"outputs: names 2 streams; this kind writes to exactly one"}},
		{"route outputs differ from its routes", proc("route", `{"routes":[{"expr":"true","output":"s-a"}]}`, "s-b"), []string{"outputs: names [s-b] but the config writes to [s-a]"}},
		{"route output not a stream id", proc("route", `{"routes":[{"expr":"true","output":"a"}]}`), []string{`config.routes[0].output: id "a" must start with "s-"`}},
		{"template that does not parse", proc("template", `{"body":"{{.message.subject"}`, "s-out"), []string{"config.body: does not parse", "config.body:1"}},
		{"template with a range in a range", proc("template", `{"body":"{{range .message.extra.a}}{{range .message.extra.a}}x{{end}}{{end}}"}`, "s-out"), []string{"config.body: has a range inside a range"}},
		{"template that defines", proc("template", `{"body":"{{define \"x\"}}{{template \"x\"}}{{end}}"}`, "s-out"), []string{"config.body: defines a template"}},
		{"truncate to nothing", proc("truncate", `{"max_bytes":0}`, "s-out"), []string{"config.max_bytes: is 0; it must be 1 to 262144"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := processor.Compile(tc.p)
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			if !errors.Is(err, domain.ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestCostLimit: an expression that squares a list of the event's extra
// fails for that event with ErrCostLimit; the same over a short list runs.
func TestCostLimit(t *testing.T) {
	pr, err := processor.Compile(proc("filter", `{"expr":"message.extra.items.all(a, message.extra.items.all(b, a != b || a == b))"}`, "s-out"))
	if err != nil {
		t.Fatal(err)
	}
	items := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, i)
		}
		return `{"items":[` + b.String() + `]}`
	}
	if _, err := pr.Run(event("s", "b", items(10))); err != nil {
		t.Fatalf("10 items: %v", err)
	}
	_, err = pr.Run(event("s", "b", items(5000)))
	if !errors.Is(err, processor.ErrCostLimit) {
		t.Fatalf("5,000 items: %v; want ErrCostLimit", err)
	}
	for _, w := range []string{"config.expr", "over the cost limit of 1000000", "does too much work for one event"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// TestTemplateOutputBounded: a template whose output passes the body
// limit fails instead of growing without end.
func TestTemplateOutputBounded(t *testing.T) {
	pr, err := processor.Compile(proc("template", `{"body":"{{range .message.extra.a}}{{$.message.body}}{{end}}"}`, "s-out"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 10000)
	_, err = pr.Run(event("s", big, `{"a":[`+strings.TrimSuffix(strings.Repeat("1,", 100), ",")+`]}`))
	if err == nil || !strings.Contains(err.Error(), "its output is over 262144 bytes") {
		t.Fatalf("err = %v; want the output limit", err)
	}
}
