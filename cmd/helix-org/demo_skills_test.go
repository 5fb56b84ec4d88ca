package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/agent/llm"
	"github.com/helixml/helix-org/agent/llm/llmtest"
	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/servertest"
	"github.com/helixml/helix-org/store"
)

// analyst is the demo's scripted model: it follows demos/skills/role.md,
// deciding each step from the last tool result. Its first handler has a
// syntax error, which it fixes from the build log create_skill returns.
func analyst(turn llmtest.Turn) llmtest.Reply {
	trigs := llmtest.Triggers(turn.Prompt())
	if len(trigs) == 0 {
		return llmtest.Reply{Text: "Nothing to do."}
	}
	q := trigs[0]
	_, csv, _ := strings.Cut(q.Body, "\n")
	if strings.Contains(q.Body, "bar chart") {
		return chartAnalyst(turn, q, csv)
	}
	results := turn.Results()
	last := ""
	if len(results) > 0 {
		last = results[0].Content
	}
	switch {
	case turn.CallsTo("list_skills") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_skills", map[string]any{})}}
	case turn.CallsTo("call_skill") > 0 && turn.CallsTo("publish") == 0:
		var out struct {
			Output json.RawMessage `json:"output"`
		}
		json.Unmarshal([]byte(last), &out)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": q.Stream, "inReplyTo": q.Event, "body": string(out.Output)})}}
	case turn.CallsTo("call_skill") > 0:
		return llmtest.Reply{Text: "Answered."}
	case turn.CallsTo("create_skill") == 0 && strings.Contains(last, `"csv_sum"`):
		return callCSV(csv)
	case turn.CallsTo("create_skill") == 0:
		return llmtest.Reply{Text: "No skill sums CSV columns; I will build one.", ToolCalls: []llm.ToolCall{createCSV("for x in; do\n")}}
	case strings.Contains(last, "syntax error"):
		return llmtest.Reply{Text: "The build log shows a syntax error; fixing the handler.", ToolCalls: []llm.ToolCall{createCSV(csvHandler)}}
	}
	return callCSV(csv)
}

func createCSV(handler string) llm.ToolCall {
	return llmtest.Call("create_skill", with(with(csvSkill, "handler", handler), "examples",
		[]map[string]any{{"input": map[string]any{"csv": "a,b\n1,2\n3,4"}, "output": map[string]any{"a": 4, "b": 6}}}))
}

// chartHandler is the python the analyst writes for a bar chart: an SVG
// drawn with the standard library, returned as a file.
const chartHandler = `import csv, io
from xml.sax.saxutils import escape

def handle(input):
    rows = list(csv.reader(io.StringIO(input["csv"].strip())))
    header, data = rows[0], rows[1:]
    values = [float(r[1]) for r in data]
    width, height, pad, bar = 60 * len(data) + 40, 240, 30, 40
    top = max(values) or 1
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<title>{escape(header[1])} by {escape(header[0])}</title>']
    for i, (row, v) in enumerate(zip(data, values)):
        h = (height - 2 * pad) * v / top
        x = pad + 60 * i
        svg.append(f'<rect class="bar" x="{x}" y="{height - pad - h:.1f}" width="{bar}" height="{h:.1f}" fill="#4a7"><title>{escape(row[0])}: {v:g}</title></rect>')
        svg.append(f'<text x="{x + bar / 2}" y="{height - pad + 15}" text-anchor="middle" font-size="12">{escape(row[0])}</text>')
    svg.append("</svg>")
    return {"bars": len(data), "file": {"name": "chart.svg", "contentType": "image/svg+xml", "text": "\n".join(svg)}}
`

// chartAnalyst is the analyst asked for a chart: it builds a python skill
// that draws one, calls it, and replies with the chart attached.
func chartAnalyst(turn llmtest.Turn, q llmtest.Trigger, csv string) llmtest.Reply {
	var last string
	if r := turn.Results(); len(r) > 0 {
		last = r[0].Content
	}
	switch {
	case turn.CallsTo("list_skills") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("list_skills", map[string]any{})}}
	case turn.CallsTo("create_skill") == 0 && turn.CallsTo("call_skill") == 0 && !strings.Contains(last, `"bar_chart"`):
		return llmtest.Reply{Text: "No skill draws charts; I will build one in Python.", ToolCalls: []llm.ToolCall{llmtest.Call("create_skill", map[string]any{
			"name": "bar_chart", "description": "Draw a bar chart (SVG) of a CSV: first column labels, second values", "template": "python",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"csv": map[string]any{"type": "string"}}, "required": []string{"csv"}},
			"handler":     chartHandler})}}
	case turn.CallsTo("call_skill") == 0:
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("call_skill", map[string]any{"name": "bar_chart", "input": map[string]any{"csv": csv}})}}
	case turn.CallsTo("publish") == 0:
		var out struct {
			Output struct {
				Bars int               `json:"bars"`
				File domain.Attachment `json:"file"`
			} `json:"output"`
		}
		json.Unmarshal([]byte(last), &out)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("publish", map[string]any{"stream": q.Stream, "inReplyTo": q.Event,
			"body": fmt.Sprintf("Here is the chart: %d bars.", out.Output.Bars), "attachments": []domain.Attachment{out.Output.File}})}}
	}
	return llmtest.Reply{Text: "Answered with a chart."}
}

func callCSV(csv string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("call_skill", map[string]any{"name": "csv_sum", "input": map[string]any{"csv": csv}})}}
}

// TestDemoSkills is demos/skills/README.md end to end: the real server,
// dispatcher and built-in agent, the model scripted, the skill built and
// run by the real Docker Engine.
func TestDemoSkills(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t, llm.Anthropic, analyst)
	st, _ := dockerStore(t, t.TempDir())
	skillSetup(t, st)
	st.SetSetting(t.Context(), agent.RuntimeSetting, agent.RuntimeBuiltin)
	useFake(t, st, llm.Anthropic, fake)
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, _, owner := startServeWith(t, st, io.Discard, serveConfig{metricsLn: mln})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_role", map[string]any{"id": "r-analyst", "title": "Analyst", "content": demoRole(t, "skills")}},
		{"create_position", map[string]any{"id": "p-analyst", "role": "r-analyst", "title": "Analyst"}},
		{"create_stream", map[string]any{"id": "s-questions", "name": "questions"}},
		{"hire_worker", map[string]any{"id": "w-analyst", "position": "p-analyst", "kind": "ai", "name": "Analyst",
			"grants": []string{"publish", "read_events", "list_skills", "get_skill", "create_skill", "call_skill", "rollback_skill"}}},
		{"invite_workers", map[string]any{"stream": "s-questions", "workers": []string{"w-analyst", "w-owner"}}},
	} {
		servertest.Call[map[string]any](t, owner, c.tool, c.args)
	}
	waitIdle(t, st)
	// On failure, show what the analyst did.
	t.Cleanup(func() {
		if t.Failed() {
			evs, _ := st.ReadEvents(context.Background(), store.EventQuery{StreamIDs: []string{domain.ActivationStreamPrefix + "w-analyst"}})
			for _, ev := range evs {
				t.Logf("analyst log: %s: %s", ev.Message.Subject, ev.Message.Body)
			}
		}
	})

	ask := func(csv string) string {
		q := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-questions", "body": "Please sum the columns of this CSV:\n" + csv})
		// A reply can wait on two image builds and a health check.
		reply := waitForReplyWithin(t, owner, "s-questions", "w-analyst", q.Seq, 2*time.Minute)
		waitIdle(t, st)
		return reply.Message.Body
	}
	if got := ask("q1,q2\n10,20\n5,7"); got != `{"q1":15,"q2":27}` {
		t.Errorf("first answer = %q", got)
	}
	sk, err := st.GetSkill(t.Context(), "csv_sum")
	if err != nil || sk.Version != 2 || sk.Status != domain.SkillReady || sk.CreatedBy != "w-analyst" {
		t.Fatalf("skill = %+v, %v; want version 2 (after the fix), ready, by w-analyst", sk, err)
	}
	// The failed build and the good one are in the metrics.
	_, metrics := scrape(t, "http://"+mln.Addr().String()+"/metrics", "")
	for _, series := range []string{`helix_org_skill_builds_total{outcome="failed"}`, `helix_org_skill_builds_total{outcome="ok"}`, "helix_org_skill_build_duration_seconds_count"} {
		if v, ok := sample(metrics, series); !ok || v < 1 {
			t.Errorf("%s = %v (present %v), want at least 1", series, v, ok)
		}
	}
	if got := ask("a,b,c\n1,2,3\n4,5,6\n7,8,9"); got != `{"a":12,"b":15,"c":18}` {
		t.Errorf("second answer = %q", got)
	}
	if again, _ := st.GetSkill(t.Context(), "csv_sum"); again.Version != 2 || again.Container != sk.Container {
		t.Errorf("the second question rebuilt the skill: %+v", again)
	}
	log := servertest.Call[struct{ Events []domain.Event }](t, owner, "worker_log", map[string]any{"worker": "w-analyst"})
	var text strings.Builder
	for _, ev := range log.Events {
		text.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	wantAll(t, "analyst's log", text.String(), "assistant: No skill sums CSV columns", "tool_result: error: ", "syntax error",
		"assistant: The build log shows a syntax error", `tool_result: {"output":{"q1":15,"q2":27}}`, `tool_result: {"output":{"a":12,"b":15,"c":18}}`)
	if n := strings.Count(text.String(), "No skill sums CSV columns"); n != 1 {
		t.Errorf("the analyst built the skill %d times; want once", n)
	}
	wantAll(t, "analyst's narrated build", text.String(), "note: building skill csv_sum version 2", "note: healthy in", "note: example 1 of 1 passed",
		"note: calling skill csv_sum", "note: skill csv_sum answered in")

	// The end of the demo: a chart, drawn by a python skill the analyst
	// writes, comes back as an attachment on the reply.
	q := servertest.Call[domain.Event](t, owner, "publish", map[string]any{"stream": "s-questions",
		"body": "Please draw a bar chart of this CSV:\nmonth,sales\njan,10\nfeb,20\nmar,5"})
	// The first python skill builds the python base image too.
	reply := waitForReplyWithin(t, owner, "s-questions", "w-analyst", q.Seq, 3*time.Minute)
	waitIdle(t, st)
	if reply.Message.Body != "Here is the chart: 3 bars." || len(reply.Message.Attachments) != 1 {
		t.Fatalf("chart reply = %+v", reply.Message)
	}
	att := reply.Message.Attachments[0]
	file := servertest.Call[struct{ Text string }](t, owner, "get_attachment", map[string]any{"ref": att.Ref})
	if att.Name != "chart.svg" || att.ContentType != "image/svg+xml" || att.Size != int64(len(file.Text)) {
		t.Errorf("attachment = %+v (%d bytes fetched)", att, len(file.Text))
	}
	checkBarChart(t, file.Text, map[string]float64{"jan": 10, "feb": 20, "mar": 5})
	log = servertest.Call[struct{ Events []domain.Event }](t, owner, "worker_log", map[string]any{"worker": "w-analyst"})
	text.Reset()
	for _, ev := range log.Events {
		text.WriteString(ev.Message.Subject + ": " + ev.Message.Body + "\n")
	}
	wantAll(t, "analyst's log", text.String(), "note: building the python base image from /usr/bin/python3", "note: skill bar_chart version 1 is live")
}

// checkBarChart parses the SVG and checks one bar per label, each as tall
// as its value relative to the tallest.
func checkBarChart(t *testing.T, svg string, want map[string]float64) {
	t.Helper()
	var doc struct {
		XMLName xml.Name
		Rects   []struct {
			Class  string  `xml:"class,attr"`
			Height float64 `xml:"height,attr"`
			Title  string  `xml:"title"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil || doc.XMLName.Local != "svg" || doc.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("not an SVG document (%v): %s", err, svg)
	}
	if len(doc.Rects) != len(want) {
		t.Fatalf("%d bars, want %d:\n%s", len(doc.Rects), len(want), svg)
	}
	top := 0.0
	for _, v := range want {
		top = max(top, v)
	}
	tallest := 0.0
	for _, r := range doc.Rects {
		tallest = max(tallest, r.Height)
	}
	for _, r := range doc.Rects {
		label, _, _ := strings.Cut(r.Title, ":")
		v, ok := want[label]
		if !ok || r.Class != "bar" || math.Abs(r.Height-tallest*v/top) > 0.5 {
			t.Errorf("bar %q height %.1f; want %.1f (value %v)", r.Title, r.Height, tallest*v/top, v)
		}
	}
}
