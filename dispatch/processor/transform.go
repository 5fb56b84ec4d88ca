package processor

import (
	"encoding/json"

	"cel.dev/cel-go/cel"

	"github.com/helixml/helix-org/domain"
)

// transformShape is the config it takes, as its errors show it.
const transformShape = `{"subject": "<CEL string>", "body": "<CEL string>", "extra": "<CEL map, e.g. {\"action\": message.extra.action}>"}`

// transformKind rewrites an event's subject, body and extra with CEL
// expressions; what it leaves out is kept.
var transformKind = Kind{
	Name:    "transform",
	About:   "rewrites the subject, body and extra with CEL expressions; a field left out is kept",
	Config:  transformShape,
	compile: compileTransform,
}

type transformConfig struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
	Extra   string `json:"extra,omitempty"`
}

func compileTransform(raw json.RawMessage, outputs []string) (runFunc, []string, error) {
	var c transformConfig
	if err := decodeConfig(raw, &c, transformShape); err != nil {
		return nil, nil, err
	}
	if c.Subject == "" && c.Body == "" && c.Extra == "" {
		return nil, nil, domain.Invalid("config", "sets none of subject, body and extra; give at least one CEL expression")
	}
	var subject, body, extra *expr
	for _, f := range []struct {
		into  **expr
		field string
		src   string
		want  *cel.Type
	}{
		{&subject, "config.subject", c.Subject, cel.StringType},
		{&body, "config.body", c.Body, cel.StringType},
		{&extra, "config.extra", c.Extra, cel.MapType(cel.StringType, cel.DynType)},
	} {
		if f.src == "" {
			continue
		}
		e, err := compileExpr(f.field, f.src, f.want)
		if err != nil {
			return nil, nil, err
		}
		*f.into = &e
	}
	outputs, err := oneOutput(outputs)
	if err != nil {
		return nil, nil, err
	}
	return func(v view) ([]domain.ProcessorOutput, error) {
		msg := v.ev.Message
		var err error
		if subject != nil {
			if msg.Subject, err = subject.string(v); err != nil {
				return nil, err
			}
		}
		if body != nil {
			if msg.Body, err = body.string(v); err != nil {
				return nil, err
			}
		}
		if extra != nil {
			if msg.Extra, err = extra.json(v); err != nil {
				return nil, err
			}
		}
		return to(outputs[0], msg), nil
	}, outputs, nil
}
