package processor

import (
	"encoding/json"
	"fmt"

	"cel.dev/cel-go/cel"

	"github.com/helixml/helix-org/domain"
)

// routeShape is the config it takes, as its errors show it.
const routeShape = `{"routes": [{"expr": "<CEL bool>", "output": "s-…"}], "default": "s-… (optional: without one, an event no route takes is dropped)"}`

// routeKind sends each event, unchanged, to the output of the first route
// whose condition holds, else to the default (or nowhere without one).
var routeKind = Kind{
	Name:    "route",
	About:   "sends each event, unchanged, to the output of the first CEL condition that holds, else to the default",
	Config:  routeShape,
	compile: compileRoute,
}

type routeConfig struct {
	Routes []struct {
		Expr   string `json:"expr"`
		Output string `json:"output"`
	} `json:"routes"`
	Default string `json:"default,omitempty"`
}

type route struct {
	cond   expr
	output string
}

func compileRoute(raw json.RawMessage, _ []string) (runFunc, []string, error) {
	var c routeConfig
	if err := decodeConfig(raw, &c, routeShape); err != nil {
		return nil, nil, err
	}
	if len(c.Routes) == 0 {
		return nil, nil, domain.Required("config.routes")
	}
	if len(c.Routes) > domain.MaxProcessorOutputs {
		return nil, nil, domain.Invalid("config.routes", "has %d routes; the limit is %d", len(c.Routes), domain.MaxProcessorOutputs)
	}
	var routes []route
	var outputs []string
	for i, r := range c.Routes {
		field := fmt.Sprintf("config.routes[%d]", i)
		if err := domain.ValidateID(field+".output", domain.PrefixStream, r.Output); err != nil {
			return nil, nil, err
		}
		cond, err := compileExpr(field+".expr", r.Expr, cel.BoolType)
		if err != nil {
			return nil, nil, err
		}
		routes = append(routes, route{cond: cond, output: r.Output})
		outputs = append(outputs, r.Output)
	}
	if c.Default != "" {
		if err := domain.ValidateID("config.default", domain.PrefixStream, c.Default); err != nil {
			return nil, nil, err
		}
		outputs = append(outputs, c.Default)
	}
	return func(v view) ([]domain.ProcessorOutput, error) {
		for _, r := range routes {
			ok, err := r.cond.bool(v)
			if err != nil {
				return nil, err
			}
			if ok {
				return to(r.output, v.ev.Message), nil
			}
		}
		if c.Default == "" {
			return nil, nil
		}
		return to(c.Default, v.ev.Message), nil
	}, outputs, nil
}
