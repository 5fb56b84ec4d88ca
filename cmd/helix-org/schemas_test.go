package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helixml/helix-org/tools"
)

// TestToolSchemasForModels: every tool of the owner's tools/list, as a
// client gets it over HTTP (find_tools too), is written for a model — a title and all four
// annotations, every input property typed and described, every list its
// item type — and converts to an OpenAI function, strict unless it takes
// a free-form map, and to a Gemini function declaration, each valid by
// that vendor's documented rules (vendors_test.go).
func TestToolSchemasForModels(t *testing.T) {
	// Every tool the owner holds, and find_tools, which a worker holding
	// more than its budget shows is shown instead.
	all := ownerTools(t)
	for _, tool := range listTools(t, "") {
		if tool.Name == "find_tools" {
			all = append(all, tool)
		}
	}
	var props int
	var loose []string
	for _, tool := range all {
		t.Run(tool.Name, func(t *testing.T) {
			if err := checkAnnotations(tool); err != nil {
				t.Error(err)
			}
			s, err := schemaOf(tool)
			if err != nil {
				t.Fatal(err)
			}
			n, errs := checkProperties("", s)
			props += n
			for _, err := range errs {
				t.Error(err)
			}
			fn, err := openAIFunction(tool)
			if err != nil {
				t.Errorf("as an OpenAI function: %v", err)
			}
			if fn["strict"] != true {
				loose = append(loose, tool.Name)
			}
			if _, err := geminiDeclaration(tool); err != nil {
				t.Errorf("as a Gemini function declaration: %v", err)
			}
		})
	}
	t.Logf("%d tools, %d input properties, every one typed and described; %d strict OpenAI functions", len(all), props, len(all)-len(loose))
	// The tools that take a free-form map (a skill's input, files, a
	// transport's config, a message's extra, a processor's config, whose
	// shape follows its kind) are sent without strict; a new one should be
	// a choice, not an accident.
	if diff := cmp.Diff([]string{"call_skill", "create_processor", "create_skill", "create_stream", "dm", "preview_processor", "publish", "update_stream"}, loose); diff != "" {
		t.Errorf("tools that cannot be strict OpenAI functions (-want +got):\n%s", diff)
	}
}

// checkAnnotations: a title, and all four hints stated on the wire rather
// than left to the protocol's defaults.
func checkAnnotations(tool *mcp.Tool) error {
	if tool.Title == "" || tool.Annotations == nil || tool.Annotations.Title != tool.Title {
		return fmt.Errorf("no title, or annotations without it")
	}
	b, err := json.Marshal(tool.Annotations)
	if err != nil {
		return err
	}
	var hints map[string]any
	if err := json.Unmarshal(b, &hints); err != nil {
		return err
	}
	for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
		if _, ok := hints[h].(bool); !ok {
			return fmt.Errorf("annotations %s state no %s", b, h)
		}
	}
	return nil
}

// checkProperties counts the properties below s and says which lack a
// type or a description, or are lists that do not type their items.
func checkProperties(at string, s map[string]any) (int, []error) {
	var n int
	var errs []error
	props, _ := s["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := props[name].(map[string]any)
		path := strings.TrimPrefix(at+"."+name, ".")
		n++
		if !typed(p) {
			errs = append(errs, fmt.Errorf("%s has no type", path))
		}
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			errs = append(errs, fmt.Errorf("%s has no description", path))
		}
		m, more := checkProperties(path, p)
		n, errs = n+m, append(errs, more...)
		if slices.Contains(typesOf(p), "array") && p["items"] != nil {
			items := p["items"].(map[string]any)
			if !typed(items) {
				errs = append(errs, fmt.Errorf("%s's items have no type", path))
			}
			m, more := checkProperties(path+"[]", items)
			n, errs = n+m, append(errs, more...)
		}
	}
	return n, errs
}

// typed: a schema names its type or types, or choices that each do.
func typed(s map[string]any) bool {
	if len(typesOf(s)) > 0 {
		return true
	}
	anyOf := asSlice(s["anyOf"])
	return len(anyOf) > 0 && !slices.ContainsFunc(anyOf, func(b any) bool { return !typed(b.(map[string]any)) })
}

// TestVendorRules: the conversions and checks of vendors_test.go refuse
// what the vendors refuse and pass what they take.
func TestVendorRules(t *testing.T) {
	cases := []struct {
		name, tool, schema string
		wantStrict         bool
		openAIErr          string
		geminiErr          string
	}{
		{"typed and described", "get_role", `{"type":"object","properties":{"id":{"type":"string","description":"a role id (r-…)"}},"required":["id"],"additionalProperties":false}`, true, "", ""},
		{"an optional property becomes nullable", "list", `{"type":"object","properties":{"kind":{"type":"string","enum":["a","b"]},"n":{"type":"integer"}},"additionalProperties":false}`, true, "", ""},
		{"no arguments", "list_roles", `{"type":"object","additionalProperties":false}`, true, "", ""},
		{"a typed map is sent loose", "create_skill", `{"type":"object","properties":{"files":{"type":"object","additionalProperties":{"type":"string"}}},"additionalProperties":false}`, false, "", ""},
		{"any JSON is sent loose and as anyOf", "publish", `{"type":"object","properties":{"extra":{"type":["object","string"]}},"additionalProperties":false}`, false, "", ""},
		{"an untyped property", "call_skill", `{"type":"object","properties":{"input":{}},"additionalProperties":false}`, true, "parameters.input: no type", "parameters.input: no type"},
		{"an enum of numbers", "pick", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]}},"required":["n"],"additionalProperties":false}`, true, "", "enum is only for STRING"},
		{"a format only OpenAI lacks", "fetch", `{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"],"additionalProperties":false}`, true, `format "uri" is not supported`, ""},
		{"a list without item type", "tag", `{"type":"object","properties":{"tags":{"type":"array"}},"required":["tags"],"additionalProperties":false}`, true, "an array needs items", ""},
		{"oneOf", "either", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"],"additionalProperties":false}`, true, "no type", `"oneOf" has no Gemini equivalent`},
		{"a name with a space", "do it", `{"type":"object","additionalProperties":false}`, true, "not 1 to 64", "not a letter or _"},
		{"a property name with a dash", "get", `{"type":"object","properties":{"the-id":{"type":"string"}},"required":["the-id"],"additionalProperties":false}`, true, "", `property name "the-id"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := &mcp.Tool{Name: c.tool, Description: "d", InputSchema: json.RawMessage(c.schema)}
			fn, err := openAIFunction(tool)
			if !matches(err, c.openAIErr) {
				t.Errorf("OpenAI: %v, want an error containing %q", err, c.openAIErr)
			}
			if c.openAIErr == "" && fn["strict"] != c.wantStrict {
				t.Errorf("OpenAI strict = %v, want %v (parameters %v)", fn["strict"], c.wantStrict, fn["parameters"])
			}
			if _, err := geminiDeclaration(tool); !matches(err, c.geminiErr) {
				t.Errorf("Gemini: %v, want an error containing %q", err, c.geminiErr)
			}
		})
	}
}

func matches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

// TestToolsListWithinBudget: what a model is shown of the owner's
// tools/list — each tool's name, description and input schema, compact
// JSON, which an agent sends with every model call — stays within the
// default tools.context_budget: every tool would not, so it is
// find_tools and the compact core. The order is by name, so the list
// caches and diffs.
func TestToolsListWithinBudget(t *testing.T) {
	budget, err := strconv.Atoi(tools.ContextBudgetSetting.Default)
	if err != nil {
		t.Fatal(err)
	}
	size := func(ts []*mcp.Tool) (n int) {
		for _, tool := range ts {
			n += tools.ShownBytes(tool)
		}
		return n
	}
	all, shown := ownerTools(t), listTools(t, "")
	t.Logf("owner: %d tools in %d B; shown %d in %d B (budget %d B)", len(all), size(all), len(shown), size(shown), budget)
	var names []string
	for _, tool := range shown {
		names = append(names, tool.Name)
	}
	if size(shown) > budget || !slices.Contains(names, "find_tools") || !slices.IsSorted(names) {
		t.Errorf("the owner is shown %v, %d B: want find_tools and the core within %d B, by name", names, size(shown), budget)
	}
}
