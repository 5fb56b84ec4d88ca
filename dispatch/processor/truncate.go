package processor

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
)

// truncateShape is the config it takes, as its errors show it.
const truncateShape = `{"max_bytes": <1 to 262144>}`

// truncateKind cuts a body to a number of bytes, at a character boundary.
var truncateKind = Kind{
	Name:    "truncate",
	About:   "cuts each body to at most max_bytes bytes (at a character boundary), keeping the rest of the message",
	Config:  truncateShape,
	compile: compileTruncate,
}

type truncateConfig struct {
	MaxBytes int `json:"max_bytes"`
}

func compileTruncate(raw json.RawMessage, outputs []string) (runFunc, []string, error) {
	var c truncateConfig
	if err := decodeConfig(raw, &c, truncateShape); err != nil {
		return nil, nil, err
	}
	if c.MaxBytes < 1 || c.MaxBytes > domain.DefaultMaxBody {
		return nil, nil, domain.Invalid("config.max_bytes", "is %d; it must be 1 to %d", c.MaxBytes, domain.DefaultMaxBody)
	}
	outputs, err := oneOutput(outputs)
	if err != nil {
		return nil, nil, err
	}
	return func(v view) ([]domain.ProcessorOutput, error) {
		msg := v.ev.Message
		msg.Body = cut(msg.Body, c.MaxBytes)
		return to(outputs[0], msg), nil
	}, outputs, nil
}

// cut returns s's first n bytes or fewer, never splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
