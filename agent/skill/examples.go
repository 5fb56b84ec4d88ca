package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/helixml/helix-org/domain"
)

// maxExamples bounds the examples one version is checked against.
const maxExamples = 20

// checkExamplesSpec refuses examples that could never be run: an input
// that is not an object (a tool's input always is) or an output that is
// not JSON.
func checkExamplesSpec(examples []domain.SkillExample) error {
	if len(examples) > maxExamples {
		return domain.Invalid("examples", "%d examples; the limit is %d", len(examples), maxExamples)
	}
	for i, ex := range examples {
		var in map[string]any
		if err := json.Unmarshal(ex.Input, &in); err != nil || in == nil {
			return domain.Invalid(fmt.Sprintf("examples[%d].input", i), "must be a JSON object (the skill's input), got %s", orNothing(ex.Input))
		}
		if len(bytes.TrimSpace(ex.Output)) == 0 || !json.Valid(ex.Output) {
			return domain.Invalid(fmt.Sprintf("examples[%d].output", i), "must be the JSON the skill answers (a text answer is a JSON string), got %s", orNothing(ex.Output))
		}
	}
	return nil
}

func orNothing(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "nothing"
	}
	return string(raw)
}

// checkExamples calls a started version with each example's input and
// fails on the first answer that is not the expected output.
func (f *Factory) checkExamples(ctx context.Context, addr string, examples []domain.SkillExample, note Note) error {
	for i, ex := range examples {
		got, err := f.execute(ctx, addr, ex.Input)
		if err != nil {
			return fmt.Errorf("example %d of %d failed: input %s: %w", i+1, len(examples), ex.Input, err)
		}
		want, have := normalJSON(ex.Output), normalJSON(got)
		if want != have {
			return fmt.Errorf("example %d of %d failed: input %s\nexpected: %s\ngot:      %s", i+1, len(examples), ex.Input, want, have)
		}
		note.say("example %d of %d passed", i+1, len(examples))
	}
	return nil
}

// normalJSON is the form outputs are compared in: decoded and encoded
// again, so object keys are sorted, spacing is gone and numbers are
// compared by value (1 and 1.0 are equal). Everything else must match
// exactly: no extra keys, arrays in order, strings byte for byte.
func normalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}
