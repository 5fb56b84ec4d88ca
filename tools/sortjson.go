package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
)

// sortKeys rewrites json.Marshal's output with every object's keys in
// the order encoding/json sorts a map's (byte order of the decoded key),
// keeping the last of keys that repeat, as decoding into a map and
// marshalling it again does — in one pass over the bytes, where that
// round trip built a value for every string and number (a third of a
// short read_events call's CPU). Strings and numbers are copied as they
// are, unless marshalling them again writes them otherwise (appendString).
func sortKeys(src []byte) ([]byte, error) {
	k := keySorter{src: src}
	out, err := k.value(make([]byte, 0, len(src)))
	if err != nil {
		return nil, err
	}
	if k.skipSpace(); k.i != len(src) {
		return nil, errBadJSON
	}
	return out, nil
}

var errBadJSON = errors.New("sort keys: not a JSON value")

type keySorter struct {
	src []byte
	i   int
}

// jsonMember is one of an object's members: its key as decoded, for
// sorting, and where its bytes (`"k":v`) are in the output.
type jsonMember struct {
	key        []byte
	start, end int
}

func (k *keySorter) skipSpace() {
	for k.i < len(k.src) && (k.src[k.i] == ' ' || k.src[k.i] == '\t' || k.src[k.i] == '\n' || k.src[k.i] == '\r') {
		k.i++
	}
}

func (k *keySorter) value(dst []byte) ([]byte, error) {
	k.skipSpace()
	if k.i >= len(k.src) {
		return nil, errBadJSON
	}
	switch k.src[k.i] {
	case '{':
		return k.object(dst)
	case '[':
		return k.array(dst)
	case '"':
		s, err := k.str()
		return appendString(dst, s), err
	}
	start := k.i
	for k.i < len(k.src) && !ends(k.src[k.i]) {
		k.i++
	}
	if k.i == start {
		return nil, errBadJSON
	}
	return append(dst, k.src[start:k.i]...), nil
}

// ends reports whether c ends a number or a literal.
func ends(c byte) bool {
	switch c {
	case ',', ']', '}', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// appendString appends a string as marshalling it again writes it. One
// with no escape in valid UTF-8 is that already (json.Marshal escaped
// what it escapes); any other — an escape json.Marshal would not write,
// as raw JSON kept as it came may hold, or bytes that are not UTF-8 — is
// decoded and marshalled again.
func appendString(dst, s []byte) []byte {
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return append(dst, s...)
	}
	var v string
	if json.Unmarshal(s, &v) != nil {
		return append(dst, s...)
	}
	b, _ := domain.MarshalPlain(v)
	return append(dst, b...)
}

// str returns the string at k.i as it is written, quotes included.
func (k *keySorter) str() ([]byte, error) {
	start := k.i
	for k.i++; k.i < len(k.src); k.i++ {
		switch k.src[k.i] {
		case '\\':
			k.i++
		case '"':
			k.i++
			return k.src[start:k.i], nil
		}
	}
	return nil, errBadJSON
}

func (k *keySorter) array(dst []byte) ([]byte, error) {
	k.i++
	dst = append(dst, '[')
	for first := true; ; first = false {
		k.skipSpace()
		if k.i < len(k.src) && k.src[k.i] == ']' && first {
			k.i++
			return append(dst, ']'), nil
		}
		if !first {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = k.value(dst); err != nil {
			return nil, err
		}
		k.skipSpace()
		if k.i >= len(k.src) {
			return nil, errBadJSON
		}
		switch k.src[k.i] {
		case ',':
			k.i++
		case ']':
			k.i++
			return append(dst, ']'), nil
		default:
			return nil, errBadJSON
		}
	}
}

func (k *keySorter) object(dst []byte) ([]byte, error) {
	k.i++
	open := len(dst)
	dst = append(dst, '{')
	var buf [16]jsonMember // most objects' members, without an allocation
	members := buf[:0]
	sorted := true
	for {
		k.skipSpace()
		if k.i < len(k.src) && k.src[k.i] == '}' && len(members) == 0 {
			k.i++
			return append(dst, '}'), nil
		}
		if k.i >= len(k.src) || k.src[k.i] != '"' {
			return nil, errBadJSON
		}
		raw, err := k.str()
		if err != nil {
			return nil, err
		}
		// The key as written, unless escaped: no copy for the common key.
		key := raw[1 : len(raw)-1]
		if bytes.IndexByte(raw, '\\') >= 0 {
			var decoded string
			if err := json.Unmarshal(raw, &decoded); err != nil {
				return nil, err
			}
			key = []byte(decoded)
		}
		if k.skipSpace(); k.i >= len(k.src) || k.src[k.i] != ':' {
			return nil, errBadJSON
		}
		k.i++
		if len(members) > 0 {
			dst = append(dst, ',')
		}
		m := jsonMember{key: key, start: len(dst)}
		dst = append(appendString(dst, raw), ':')
		if dst, err = k.value(dst); err != nil {
			return nil, err
		}
		m.end = len(dst)
		if n := len(members); n > 0 && bytes.Compare(members[n-1].key, key) >= 0 {
			sorted = false
		}
		members = append(members, m)
		k.skipSpace()
		if k.i >= len(k.src) {
			return nil, errBadJSON
		}
		if k.src[k.i] == '}' {
			k.i++
			break
		}
		if k.src[k.i] != ',' {
			return nil, errBadJSON
		}
		k.i++
	}
	if sorted {
		return append(dst, '}'), nil
	}
	// Stable by key, then the last of each key kept, as a map keeps it.
	slices.SortStableFunc(members, func(a, b jsonMember) int { return bytes.Compare(a.key, b.key) })
	written := slices.Clone(dst[open:])
	dst = append(dst[:open], '{')
	first := true
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, written[m.start-open:m.end-open]...)
	}
	return append(dst, '}'), nil
}
