package processor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/helixml/helix-org/domain"
)

// templateShape is the config it takes, as its errors show it.
const templateShape = `{"subject": "<template>", "body": "<template>"}`

// templateKind writes a new subject and body with Go text/templates over
// the event ({{.message.subject}}, {{.message.extra.action}},
// {{.source.kind}}); what it leaves out is kept.
var templateKind = Kind{
	Name:    "template",
	About:   "writes a new subject and body with Go text/templates over the event, e.g. {{.message.extra.action}}: {{.message.subject}}; a field left out is kept",
	Config:  templateShape,
	compile: compileTemplate,
}

type templateConfig struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

func compileTemplate(raw json.RawMessage, outputs []string) (runFunc, []string, error) {
	var c templateConfig
	if err := decodeConfig(raw, &c, templateShape); err != nil {
		return nil, nil, err
	}
	if c.Subject == "" && c.Body == "" {
		return nil, nil, domain.Invalid("config", "sets neither subject nor body; give at least one template")
	}
	subject, err := parseTemplate("config.subject", c.Subject)
	if err != nil {
		return nil, nil, err
	}
	body, err := parseTemplate("config.body", c.Body)
	if err != nil {
		return nil, nil, err
	}
	if outputs, err = oneOutput(outputs); err != nil {
		return nil, nil, err
	}
	return func(v view) ([]domain.ProcessorOutput, error) {
		msg, data := v.ev.Message, v.data()
		if subject != nil {
			if msg.Subject, err = execute(subject, data, domain.MaxSubject); err != nil {
				return nil, err
			}
		}
		if body != nil {
			if msg.Body, err = execute(body, data, domain.DefaultMaxBody); err != nil {
				return nil, err
			}
		}
		return to(outputs[0], msg), nil
	}, outputs, nil
}

// parseTemplate parses one field's template (nil for none). A template
// runs once per event inside the server, so its work must follow its
// data: no templates defined or called (which recurse), no range inside
// a range (which squares a list of the extra).
func parseTemplate(field, src string) (*template.Template, error) {
	if src == "" {
		return nil, nil
	}
	if len(src) > MaxExprLength {
		return nil, domain.Invalid(field, "is %d bytes; the limit is %d", len(src), MaxExprLength)
	}
	t, err := template.New(field).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, domain.Invalid(field, "does not parse: %v", err)
	}
	if len(t.Templates()) > 1 {
		return nil, domain.Invalid(field, "defines a template; a processor's template is one text, without define or block")
	}
	if err := bounded(field, t.Tree.Root, 0); err != nil {
		return nil, err
	}
	return t, nil
}

// bounded walks a template's nodes for what could make its work grow
// faster than its data.
func bounded(field string, n parse.Node, ranges int) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := bounded(field, c, ranges); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return domain.Invalid(field, "calls template %q (at %d); a processor's template is one text", n.Name, n.Position())
	case *parse.RangeNode:
		if ranges > 0 {
			return domain.Invalid(field, "has a range inside a range (at byte %d); a processor's template ranges over one list at a time", n.Position())
		}
		return firstErr(bounded(field, n.List, ranges+1), bounded(field, n.ElseList, ranges))
	case *parse.IfNode:
		return firstErr(bounded(field, n.List, ranges), bounded(field, n.ElseList, ranges))
	case *parse.WithNode:
		return firstErr(bounded(field, n.List, ranges), bounded(field, n.ElseList, ranges))
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// errTooLong stops a template whose output passes its limit.
var errTooLong = errors.New("output too long")

// limited is a buffer that refuses to grow past max bytes.
type limited struct {
	b   strings.Builder
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > l.max {
		return 0, errTooLong
	}
	return l.b.Write(p)
}

func execute(t *template.Template, data any, max int) (string, error) {
	out := &limited{max: max}
	if err := t.Execute(out, data); err != nil {
		if errors.Is(err, errTooLong) {
			return "", fmt.Errorf("%s: its output is over %d bytes", t.Name(), max)
		}
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	return out.b.String(), nil
}
