package domain

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SettingType is the type of an operational config value.
type SettingType string

const (
	SettingString   SettingType = "string"
	SettingInt      SettingType = "int"
	SettingBool     SettingType = "bool"
	SettingDuration SettingType = "duration"
	SettingJSON     SettingType = "json"
)

// SettingSpec declares one operational config key: its type, default,
// description and whether it is a secret (encrypted at rest, redacted).
type SettingSpec struct {
	Key         string
	Type        SettingType
	Default     string
	Description string
	Secret      bool
	// Enum, when set, lists the only valid values.
	Enum []string
	// SecretFields names the keys of a JSON value that are secrets, for
	// redaction of JSON settings that mix secrets and plain values.
	SecretFields []string
	// RunsCode marks a setting whose value makes the server run a program
	// or loosens what runs it (a runtime, a command, a shell for agents, a
	// container's image, user, runtime, environment or networks, a host
	// binary put in images). An import applies one only when told to.
	RunsCode bool
	// Validate, when set, checks a value beyond its type: the same code
	// that reads the setting, so a value `config set` accepts is one that
	// works. Its error never repeats the value (it may be a secret).
	Validate func(value string) error
}

// Choices lists the spec's enum as a person reads it, the empty value
// named for what it means rather than left as an empty item.
func (s SettingSpec) Choices() string {
	out := make([]string, len(s.Enum))
	for i, v := range s.Enum {
		out[i] = cmp.Or(v, `"" (unset: the default)`)
	}
	return strings.Join(out, ", ")
}

// Check validates a raw value against the spec's type.
func (s SettingSpec) Check(value string) error {
	switch s.Type {
	case SettingInt:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return invalidError(fmt.Sprintf("%s: %q is not an integer", s.Key, value))
		}
	case SettingBool:
		if _, err := strconv.ParseBool(value); err != nil {
			return invalidError(fmt.Sprintf("%s: %q is not a boolean (valid: true, false)", s.Key, value))
		}
	case SettingDuration:
		if _, err := time.ParseDuration(value); err != nil {
			return invalidError(fmt.Sprintf("%s: %q is not a duration (e.g. 30s, 5m)", s.Key, value))
		}
	case SettingJSON:
		if err := CheckJSONDepth(s.Key, []byte(value)); err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return invalidError(fmt.Sprintf("%s: value is not a JSON object", s.Key))
		}
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, value) {
		return invalidError(fmt.Sprintf("%s: unknown value %q (valid: %s)", s.Key, value, s.Choices()))
	}
	if s.Validate != nil {
		if err := s.Validate(value); err != nil {
			return fmt.Errorf("%s: %w", s.Key, err)
		}
	}
	return nil
}

// Redacted is what a secret shows in place of its value.
const Redacted = "********"

// Redact returns the value as it may be shown without --reveal-secrets.
func (s SettingSpec) Redact(value string) string {
	if s.Secret {
		return Redacted
	}
	if s.Type == SettingJSON && len(s.SecretFields) > 0 {
		var m map[string]any
		if json.Unmarshal([]byte(value), &m) != nil {
			return Redacted
		}
		for _, f := range s.SecretFields {
			if _, ok := m[f]; ok {
				m[f] = Redacted
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	return value
}

// HasSecret reports whether any part of the value must be encrypted at rest.
func (s SettingSpec) HasSecret() bool { return s.Secret || len(s.SecretFields) > 0 }

// Settings is the registry of every known config key.
type Settings []SettingSpec

// Lookup finds a spec. An unknown key's error suggests the nearest known
// one, so a typo is fixed in one step.
func (r Settings) Lookup(key string) (SettingSpec, error) {
	for _, s := range r {
		if s.Key == key {
			return s, nil
		}
	}
	keys := make([]string, len(r))
	for i, s := range r {
		keys[i] = s.Key
	}
	if near := Nearest(key, keys); near != "" {
		return SettingSpec{}, invalidError(fmt.Sprintf("unknown config key %q; did you mean %q?", key, near))
	}
	return SettingSpec{}, invalidError(fmt.Sprintf("unknown config key %q", key))
}

// invalidError is a whole sentence that matches ErrInvalid without
// ending in its text.
type invalidError string

func (e invalidError) Error() string { return string(e) }
func (e invalidError) Unwrap() error { return ErrInvalid }

// Nearest is the name among names closest to name by edit distance, if
// it is close enough to be a typo of it: at most a third of name's
// length, and at least 2. A "did you mean" fixes a typo in one step.
func Nearest(name string, names []string) string {
	best, bestDist := "", max(2, len(name)/3)+1
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
