package gitlab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParse feeds arbitrary payloads of each event the endpoint takes to
// the parser (the event comes from Events, never from the request as it
// is): it must never panic,
// and whatever it accepts carries valid JSON extra naming the event and a
// thread that is an issue or merge request reference or none.
func FuzzParse(f *testing.F) {
	for _, s := range []struct{ event, file string }{{"issue", "issue.json"}, {"note", "note_issue.json"}, {"note", "note_merge_request.json"},
		{"merge_request", "merge_request.json"}, {"push", "push.json"}} {
		b, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.event, b)
	}
	f.Add("note", []byte(`{"object_attributes":{"note":"\u0000"},"merge_request":{"iid":-1}}`))
	f.Add("issue", []byte(`[]`))
	f.Add("push", []byte(`{"commits":null,"project":{"id":"x"}}`))
	names := EventNames()
	f.Fuzz(func(t *testing.T, name string, body []byte) {
		event := names[len(name)%len(names)]
		if slices.Contains(names, name) {
			event = name
		}
		d, err := Parse(event, body)
		if err != nil {
			return
		}
		var extra map[string]json.RawMessage
		if err := json.Unmarshal(d.Message.Extra, &extra); err != nil {
			t.Fatalf("accepted payload has bad extra %q: %v", d.Message.Extra, err)
		}
		var got string
		if err := json.Unmarshal(extra["event"], &got); err != nil || got != event {
			t.Fatalf("extra.event = %s, want %q", extra["event"], event)
		}
		if d.Message.ThreadID != "" && !threadRef().MatchString(d.Message.ThreadID) {
			t.Fatalf("thread %q is not #<iid> or !<iid>", d.Message.ThreadID)
		}
	})
}
