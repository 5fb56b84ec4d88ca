package domain

import (
	"bytes"
	"testing"
)

// FuzzRedactFlatAsDecoded: whatever arguments the flat path takes, it
// writes what decoding, redacting and marshalling them writes.
func FuzzRedactFlatAsDecoded(f *testing.F) {
	for _, s := range []string{`{"stream":"s","body":"hi"}`, `{"body":"a<b && c>d","n":1.5}`, `{"token":"x","b":true,"a":null}`,
		`{"z":"hxo_secret","y":"Bearer t"}`, ` { "a" : "b" } `, `{"a":"x","a":"y"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		flat, ok := redactFlat(in, []string{"webhookKey"})
		if !ok {
			return
		}
		if want := redactDecoded(in, []string{"webhookKey"}); !bytes.Equal(flat, want) {
			t.Errorf("redactFlat(%s) = %s, decoded %s", in, flat, want)
		}
	})
}
