package domain

import (
	"errors"
	"testing"
)

func TestValidateOrgName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"acme", true},
		{"north-lab", true},
		{"a1", true},
		{"", false},
		{"Acme", false},
		{"1acme", false},
		{"acme-", false},
		{"a--b", false},
		{"a_b", false},
		{"../etc", false},
		{"a.b", false},
		{"abcdefghijabcdefghijabcdefghijabcdefghijk", false},
	}
	for _, tt := range tests {
		err := ValidateOrgName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateOrgName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateOrgName(%q) = %v, not ErrInvalid", tt.name, err)
		}
	}
}
