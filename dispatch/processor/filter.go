package processor

import (
	"encoding/json"

	"cel.dev/cel-go/cel"

	"github.com/helixml/helix-org/domain"
)

// filterShape is the config it takes, as its errors show it.
const filterShape = `{"expr": "<CEL bool, e.g. message.subject.contains(\"invoice\")>"}`

// filterKind passes on the events its condition holds for, unchanged.
var filterKind = Kind{
	Name:    "filter",
	About:   "passes on, unchanged, the events a CEL condition holds for",
	Config:  filterShape,
	compile: compileFilter,
}

type filterConfig struct {
	Expr string `json:"expr"`
}

func compileFilter(raw json.RawMessage, outputs []string) (runFunc, []string, error) {
	var c filterConfig
	if err := decodeConfig(raw, &c, filterShape); err != nil {
		return nil, nil, err
	}
	cond, err := compileExpr("config.expr", c.Expr, cel.BoolType)
	if err != nil {
		return nil, nil, err
	}
	if outputs, err = oneOutput(outputs); err != nil {
		return nil, nil, err
	}
	return func(v view) ([]domain.ProcessorOutput, error) {
		ok, err := cond.bool(v)
		if err != nil || !ok {
			return nil, err
		}
		return to(outputs[0], v.ev.Message), nil
	}, outputs, nil
}
