package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrintResult: how call prints a tool's JSON in each format.
func TestPrintResult(t *testing.T) {
	tests := []struct {
		name, format, in, want string
	}{
		{"a list of objects is a table, id first, nested values as JSON", "",
			`{"workers":[{"name":"Maya","id":"w-maya","tags":["a"]},{"id":"w-bo","name":"Bo","extra":true}],"cursor":3}`,
			"ID      NAME  TAGS   EXTRA\nw-maya  Maya  [\"a\"]  \nw-bo    Bo           true\ncursor: 3\n"},
		{"a field the first row leaves out keeps its place", "",
			`{"events":[{"createdAt":"t1","id":"e-1","seq":1},{"causedBy":"a-1","createdAt":"t2","depth":1,"id":"e-2","seq":2}]}`,
			"ID   CAUSEDBY  CREATEDAT  DEPTH  SEQ\ne-1            t1                1\ne-2  a-1       t2         1      2\n"},
		{"the same columns whichever row comes first", "",
			`{"events":[{"causedBy":"a-1","createdAt":"t2","depth":1,"id":"e-2","seq":2},{"createdAt":"t1","id":"e-1","seq":1}]}`,
			"ID   CAUSEDBY  CREATEDAT  DEPTH  SEQ\ne-2  a-1       t2         1      2\ne-1            t1                1\n"},
		{"an empty list says so", "", `{"roles":[]}`, "No roles.\n"},
		{"a top-level array", "table", `[{"a":1},{"a":2}]`, "A\n1\n2\n"},
		{"an object is YAML in its field order, text as a block", "", `{"title":"Echo","content":"line 1\nline 2","n":1.50}`,
			"title: Echo\ncontent: |-\n  line 1\n  line 2\nn: 1.50\n"},
		{"-o yaml of a list stays YAML", "yaml", `{"roles":[{"id":"r-a"}]}`, "roles:\n  - id: r-a\n"},
		{"-o json is indented JSON", "json", `{"b":1,"a":[true,null]}`, "{\n  \"a\": [\n    true,\n    null\n  ],\n  \"b\": 1\n}\n"},
		{"a string that looks like a number keeps its quotes", "", `{"v":"8"}`, "v: \"8\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printResult(&b, []byte(tt.in), tt.format); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
