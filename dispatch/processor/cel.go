package processor

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/helixml/helix-org/domain"
)

// Limits on expressions. CostLimit is CEL's own measure of the work one
// evaluation does (about one unit per operation, more for operations over
// long strings and lists): an expression that does more than that for one
// event fails for that event instead of holding the dispatcher.
const (
	CostLimit     = 1_000_000
	MaxExprLength = 4 << 10
	maxRecursion  = 64
)

// ErrCostLimit is an evaluation that went over CostLimit.
var ErrCostLimit = errors.New("over the cost limit")

// celEnv is the one environment every expression compiles in: the event's
// message, source and label, typed, and CEL's string extensions.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(types.ParseStructTags(true), reflect.TypeFor[*Message](), reflect.TypeFor[*Source](), reflect.TypeFor[*Label]()),
		cel.Variable("message", cel.ObjectType("processor.Message")),
		cel.Variable("source", cel.ObjectType("processor.Source")),
		cel.Variable("label", cel.ObjectType("processor.Label")),
		ext.Strings(),
		cel.ParserRecursionLimit(maxRecursion),
		cel.ParserExpressionSizeLimit(MaxExprLength),
	)
})

// expr is a compiled expression and the field it came from.
type expr struct {
	field string
	prg   cel.Program
}

// compileExpr type-checks src, which field of the config holds, and
// requires its result to be one of want (dyn, which an expression over
// message.extra has, is accepted for any: it is checked when it runs).
func compileExpr(field, src string, want ...*cel.Type) (expr, error) {
	if strings.TrimSpace(src) == "" {
		return expr{}, domain.Required(field)
	}
	if len(src) > MaxExprLength {
		return expr{}, domain.Invalid(field, "is %d bytes; the limit is %d", len(src), MaxExprLength)
	}
	env, err := celEnv()
	if err != nil {
		return expr{}, fmt.Errorf("expression environment: %w", err)
	}
	ast, iss := env.CompileSource(common.NewStringSource(src, field))
	if iss.Err() != nil {
		return expr{}, domain.Invalid(field, "does not compile:\n%s", iss.Err())
	}
	if out := ast.OutputType(); !out.IsExactType(types.DynType) && !anyOf(out, want) {
		return expr{}, domain.Invalid(field, "is of type %s; it must be %s", out, typeNames(want))
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return expr{}, domain.Invalid(field, "%v", err)
	}
	return expr{field: field, prg: prg}, nil
}

func anyOf(t *cel.Type, want []*cel.Type) bool {
	for _, w := range want {
		if w.IsAssignableType(t) {
			return true
		}
	}
	return false
}

func typeNames(ts []*cel.Type) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.String())
	}
	return strings.Join(names, " or ")
}

// eval runs the expression over v.
func (e expr) eval(v view) (ref.Val, error) {
	out, _, err := e.prg.Eval(v.activation())
	if err != nil {
		if strings.Contains(err.Error(), "cost limit exceeded") {
			return nil, fmt.Errorf("%s: %w of %d: the expression does too much work for one event (an expression over a large list or body); make it do less", e.field, ErrCostLimit, CostLimit)
		}
		return nil, fmt.Errorf("%s: %w", e.field, err)
	}
	return out, nil
}

// bool evaluates a condition.
func (e expr) bool(v view) (bool, error) {
	out, err := e.eval(v)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%s: is %s, not a bool", e.field, out.Type())
	}
	return b, nil
}

// string evaluates an expression whose value is text.
func (e expr) string(v view) (string, error) {
	out, err := e.eval(v)
	if err != nil {
		return "", err
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", fmt.Errorf("%s: is %s, not a string", e.field, out.Type())
	}
	return s, nil
}

// json evaluates an expression whose value is a JSON object.
func (e expr) json(v view) ([]byte, error) {
	out, err := e.eval(v)
	if err != nil {
		return nil, err
	}
	native, err := out.ConvertToNative(reflect.TypeFor[*structpb.Struct]())
	if err != nil {
		return nil, fmt.Errorf("%s: is %s, not a JSON object: %w", e.field, out.Type(), err)
	}
	return protojson.Marshal(native.(*structpb.Struct))
}
