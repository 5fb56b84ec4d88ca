package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/server/metrics"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// TestExposition: each hook shows in the scrape as the series it feeds,
// and events count from the metrics' start, by their stream's kind.
func TestExposition(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.Bootstrap(t.Context(), []string{"publish"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStream(t.Context(), store.OwnerWorker, domain.Stream{ID: "s-a", Name: "a", Transport: domain.Transport{Kind: domain.TransportLocal}}); err != nil {
		t.Fatal(err)
	}
	publish := func() {
		if _, err := st.Append(t.Context(), domain.Event{StreamID: "s-a", Source: store.OwnerWorker, Message: domain.Message{Body: "x"}}, store.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.StoreInsight(t.Context(), store.OwnerWorker, domain.Insight{Trigger: "deploy", Resolution: "drain first", Type: domain.InsightPattern, Scope: domain.ScopeOrg}, 0); err != nil {
		t.Fatal(err)
	}
	publish() // before the metrics: not counted
	m, err := metrics.New(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	publish()
	publish()
	m.HTTPRequest("GET /healthz", 200, time.Millisecond)
	m.ToolCall("publish", "ok")
	m.ActivationStarted()
	m.ActivationStarted()
	m.ActivationFinished(domain.ActivationSucceeded, true, 2*time.Second)
	m.ActivationFinished(domain.ActivationFailed, false, 0) // never started: the running gauge stays
	m.ModelCall("m1", 100, 10, domain.USD(0.5))
	m.Delivery("webhook", "retry")
	m.SkillBuild(false, 3*time.Second)
	m.SkillBuild(true, 5*time.Second)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`helix_org_http_requests_total{route="GET /healthz",status="200"} 1`,
		`helix_org_http_request_duration_seconds_count{route="GET /healthz"} 1`,
		`helix_org_mcp_tool_calls_total{outcome="ok",tool="publish"} 1`,
		`helix_org_activations_running 1`,
		`helix_org_activations_finished_total{outcome="failed"} 1`,
		`helix_org_activation_duration_seconds_sum{outcome="succeeded"} 2`,
		`helix_org_model_tokens_total{direction="input",model="m1"} 100`,
		`helix_org_model_cost_usd_total{model="m1"} 0.5`,
		`helix_org_delivery_attempts_total{kind="webhook",outcome="retry"} 1`,
		`helix_org_skill_builds_total{outcome="failed"} 1`,
		`helix_org_skill_build_duration_seconds_count 2`,
		`helix_org_events_appended_total{kind="local"} 2`,
		`helix_org_triggers_pending 0`,
		`helix_org_metrics_store_errors 0`,
		`helix_org_insights_by_type{type="pattern"} 1`,
		`helix_org_insights_by_scope{scope="org"} 1`,
		`helix_org_insight_versions{state="current"} 1`,
		`helix_org_insights_flagged{flag="quarantined"} 0`,
		`helix_org_insight_votes 0`,
		`helix_org_metrics_memory_errors 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q, want the text format's", ct)
	}
	// Prometheus' own parser reads the whole scrape: every family typed,
	// histograms whole, the Go runtime's and the process's figures there.
	fams, err := parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses the scrape: %v\n%s", err, body)
	}
	for name, typ := range map[string]dto.MetricType{
		"helix_org_http_request_duration_seconds": dto.MetricType_HISTOGRAM, "helix_org_http_requests_total": dto.MetricType_COUNTER,
		"helix_org_activations_running": dto.MetricType_GAUGE, "go_goroutines": dto.MetricType_GAUGE,
		"go_memstats_heap_inuse_bytes": dto.MetricType_GAUGE, "process_resident_memory_bytes": dto.MetricType_GAUGE,
		"process_open_fds": dto.MetricType_GAUGE, "process_cpu_seconds_total": dto.MetricType_COUNTER,
	} {
		f := fams[name]
		if f == nil || f.GetType() != typ || len(f.GetMetric()) == 0 {
			t.Errorf("family %s: %v, want a %s with a series", name, f, typ)
		}
	}
	var h *dto.Histogram
	for _, m := range fams["helix_org_activation_duration_seconds"].GetMetric() {
		if m.GetLabel()[0].GetValue() == "succeeded" {
			h = m.GetHistogram()
		}
	}
	if b := h.GetBucket(); h.GetSampleCount() != 1 || h.GetSampleSum() != 2 || len(b) < 2 || b[0].GetCumulativeCount() != 0 || b[1].GetCumulativeCount() != 1 {
		t.Errorf("activation duration histogram %v, want the one 2 s run in the 5 s bucket and up", h)
	}
	if rss := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); rss < 1<<20 {
		t.Errorf("process_resident_memory_bytes %v, want this process's memory", rss)
	}

	// A second scrape adds only what is new.
	publish()
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `helix_org_events_appended_total{kind="local"} 3`; !strings.Contains(rec.Body.String(), want+"\n") {
		t.Errorf("second scrape lacks %s", want)
	}
}

// TestLabelValuesEscaped: a label value with a quote, a backslash or a
// newline (a route pattern, a model name from a config) stays one series
// in the scrape.
func TestLabelValuesEscaped(t *testing.T) {
	m, err := metrics.New(t.Context(), storetest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	m.ModelCall("a\"b\\c\nd", 1, 2, domain.USD(0))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `helix_org_model_calls_total{model="a\"b\\c\nd"} 1` + "\n"; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("scrape lacks %s", want)
	}
	fams, err := parse(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := fams["helix_org_model_calls_total"].GetMetric()[0].GetLabel()[0].GetValue(); got != "a\"b\\c\nd" {
		t.Errorf("the parser reads the label as %q", got)
	}
}

// parse reads a scrape with Prometheus' own text parser.
func parse(r *strings.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(r)
}
