package domain

import (
	"crypto/rand"
	"io"
	"strings"
)

// ID prefixes name the kind of thing an ID refers to.
const (
	PrefixRole     = "r-"
	PrefixPosition = "p-"
	PrefixWorker   = "w-"
	PrefixStream   = "s-"
	PrefixEvent    = "e-"
	// PrefixActivation starts every activation id.
	PrefixActivation = "a-"
)

// MaxIDLen bounds IDs so they stay readable and fit in paths and filenames.
const MaxIDLen = 64

var idPattern = LazyRegexp(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidateID checks a caller-chosen ID: the kind prefix followed by a
// lowercase slug of letters, digits and single hyphens.
func ValidateID(field, prefix, id string) error {
	if !strings.HasPrefix(id, prefix) {
		return Invalid(field, "id %q must start with %q", id, prefix)
	}
	if len(id) > MaxIDLen || !idPattern().MatchString(strings.TrimPrefix(id, prefix)) {
		return Invalid(field, "id %q must be %q followed by lowercase letters, digits and single hyphens (at most %d characters)", id, prefix, MaxIDLen)
	}
	return nil
}

// Slug turns a human name into an ID with the given prefix: "Support
// Engineer" → "r-support-engineer". An empty slug becomes a random one.
func Slug(prefix, name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if max := MaxIDLen - len(prefix) - 5; len(s) > max {
		s = strings.TrimRight(s[:max], "-")
	}
	if s == "" {
		s = RandomSlug(8)
	}
	return prefix + s
}

const slugAlphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// RandomSlug returns n characters from an unambiguous lowercase alphabet.
func RandomSlug(n int) string { return RandomSlugFrom(rand.Reader, n) }

// RandomSlugFrom is RandomSlug drawing from r, which must not fail (a
// seeded reader makes ids a simulation can replay).
func RandomSlugFrom(r io.Reader, n int) string {
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		panic("random slug: " + err.Error())
	}
	for i, c := range buf {
		buf[i] = slugAlphabet[int(c)%len(slugAlphabet)]
	}
	return string(buf)
}

// NewEventID returns a fresh random event ID.
func NewEventID() string { return PrefixEvent + RandomSlug(16) }
