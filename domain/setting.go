package domain

import (
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
}

// Check validates a raw value against the spec's type.
func (s SettingSpec) Check(value string) error {
	switch s.Type {
	case SettingInt:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("%s: %q is not an integer: %w", s.Key, value, ErrInvalid)
		}
	case SettingBool:
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%s: %q is not a boolean (valid: true, false): %w", s.Key, value, ErrInvalid)
		}
	case SettingDuration:
		if _, err := time.ParseDuration(value); err != nil {
			return fmt.Errorf("%s: %q is not a duration (e.g. 30s, 5m): %w", s.Key, value, ErrInvalid)
		}
	case SettingJSON:
		var v map[string]any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return fmt.Errorf("%s: value is not a JSON object: %w", s.Key, ErrInvalid)
		}
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, value) {
		return fmt.Errorf("%s: unknown value %q (valid: %s): %w", s.Key, value, strings.Join(s.Enum, ", "), ErrInvalid)
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

// Lookup finds a spec, or names the valid keys.
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
	return SettingSpec{}, fmt.Errorf("unknown config key %q (valid: %s): %w", key, strings.Join(keys, ", "), ErrInvalid)
}
