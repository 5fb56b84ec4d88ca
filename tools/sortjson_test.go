package tools

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/helixml/helix-org/domain"
)

// roundTrip is what outputJSON did before sortKeys: decode into a value
// and marshal it again (with <, > and & as themselves), which sorts every
// object's keys.
func roundTrip(t testing.TB, b []byte) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	out, err := domain.MarshalPlain(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSortKeysAsTheRoundTrip(t *testing.T) {
	ev := domain.Event{Seq: 9007199254740993, ID: "e-1", StreamID: "s-a", Source: "w-owner", CreatedAt: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC),
		Message: domain.Message{Body: "<b>hi</b> & \u2028 \"quoted\" \\ \n\ttab", To: []string{"w-b", "w-a"}, ThreadID: "t-1"}}
	tests := []struct {
		name string
		in   any
	}{
		{"event", ev},
		{"read_events answer", readEventsOut{Events: []domain.Event{ev, ev}, Cursor: 12}},
		{"empty list and object", map[string]any{"z": []int{}, "a": map[string]any{}, "m": nil}},
		{"raw JSON with keys out of order and repeated", map[string]json.RawMessage{"p": json.RawMessage(`{"b":1,"a":[{"y":true,"x":null}],"b":2}`)}},
		{"numbers as written", json.RawMessage(`{"f":1.50,"e":-2e10,"i":12345678901234567890}`)},
		{"escaped and non-ASCII keys", map[string]int{"\u00e9": 1, "e": 2, "a\"b": 3, "a<b": 4, "Z": 5, "": 6}},
		{"invalid UTF-8", map[string]string{"bad\xff": "x\xfey"}},
		{"nested arrays", [][]map[string]int{{{"b": 1, "a": 2}}, {}}},
		{"a plain string", "just text"},
	}
	// What it sorts comes from domain.MarshalPlain, or from json.Marshal (raw
	// JSON a client sent, escaped for HTML): the same either way.
	for _, tt := range tests {
		for name, marshal := range map[string]func(any) ([]byte, error){"plain": domain.MarshalPlain, "json.Marshal": json.Marshal} {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				b, err := marshal(tt.in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sortKeys(b)
				if err != nil {
					t.Fatalf("sortKeys(%s): %v", b, err)
				}
				if want := roundTrip(t, b); !bytes.Equal(got, want) {
					t.Errorf("sortKeys(%s)\n got %s\nwant %s", b, got, want)
				}
			})
		}
	}
}

func TestSortKeysRefusesWhatIsNotJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":}`, `[1,`, `"open`, `{"a":1} x`, `{"a":1,}`, `[1 2]`} {
		if _, err := sortKeys([]byte(in)); err == nil {
			t.Errorf("sortKeys(%q) = nil error, want one", in)
		}
	}
}

// FuzzSortKeys: for any JSON json.Marshal could write (compacted), the
// answer is the round trip's.
func FuzzSortKeys(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":2}`, `[{"b":{"d":1,"c":2},"a":[3]}]`, `{"a":1,"a":2}`, `"x"`, `{"\u00e9":1,"e":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		var b bytes.Buffer
		if json.Compact(&b, in) != nil {
			return
		}
		marshalled, err := json.Marshal(json.RawMessage(b.Bytes()))
		if err != nil {
			return
		}
		got, err := sortKeys(marshalled)
		if err != nil {
			t.Fatalf("sortKeys(%s): %v", marshalled, err)
		}
		if want := roundTrip(t, marshalled); !bytes.Equal(got, want) {
			t.Errorf("sortKeys(%s)\n got %s\nwant %s", marshalled, got, want)
		}
	})
}
