package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	// A second scrape adds only what is new.
	publish()
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `helix_org_events_appended_total{kind="local"} 3`; !strings.Contains(rec.Body.String(), want+"\n") {
		t.Errorf("second scrape lacks %s", want)
	}
}
