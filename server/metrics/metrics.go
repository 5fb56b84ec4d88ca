// Package metrics holds the server's Prometheus metrics, each server's
// its own (no global registry, so two servers in one process never
// collide), written in the text format by expose.go. Lower layers — dispatch, delivery, the relay, the skill
// factory — report through hooks they declare and cmd wires to these
// methods; none of them imports this package. Counts that the store
// already keeps (events appended, triggers pending) are read from it at
// scrape time, so the hot paths pay nothing for them.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/helixml/helix-org/domain"
)

// Store is what the scrape-time collector reads; *store.Store satisfies it.
type Store interface {
	PendingTriggers(ctx context.Context) (int64, error)
	LastSeq(ctx context.Context) (int64, error)
	EventsByKind(ctx context.Context, after int64) (map[domain.TransportKind]int64, int64, error)
	MemoryHealth(ctx context.Context) (domain.MemoryHealth, error)
}

// Metrics is every metric the server exports.
type Metrics struct {
	families []family

	httpRequests *counterVec
	httpDuration *histogram
	toolCalls    *counterVec
	running      *gauge
	finished     *counterVec
	actDuration  *histogram
	modelCalls   *counterVec
	modelTokens  *counterVec
	modelCost    *counterVec
	deliveries   *counterVec
	skillBuilds  *counterVec
	skillBuild   *histogram
}

// New builds the metrics over st. Events count from now on.
func New(ctx context.Context, st Store) (*Metrics, error) {
	seq, err := st.LastSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: read the event log's end: %w", err)
	}
	m := &Metrics{
		httpRequests: newCounterVec("helix_org_http_requests_total", "HTTP requests by route pattern and status.", "route", "status"),
		httpDuration: newHistogram("helix_org_http_request_duration_seconds", "HTTP request latency by route pattern.", defBuckets, "route"),
		toolCalls:    newCounterVec("helix_org_mcp_tool_calls_total", "MCP tool calls by tool and outcome (ok, tool_error, rejected).", "tool", "outcome"),
		running:      &gauge{name: "helix_org_activations_running", help: "Activations whose agent is running."},
		finished:     newCounterVec("helix_org_activations_finished_total", "Activations finished, by outcome.", "outcome"),
		actDuration: newHistogram("helix_org_activation_duration_seconds", "Activation run time, by outcome.",
			[]float64{1, 5, 15, 30, 60, 120, 300, 600, 1800}, "outcome"),
		modelCalls:  newCounterVec("helix_org_model_calls_total", "Model calls relayed for activations, by model.", "model"),
		modelTokens: newCounterVec("helix_org_model_tokens_total", "Model tokens relayed, by model and direction (input, output).", "model", "direction"),
		modelCost:   newCounterVec("helix_org_model_cost_usd_total", "Cost of relayed model calls in US dollars, by model, as llm.prices priced them.", "model"),
		deliveries: newCounterVec("helix_org_delivery_attempts_total",
			"Outbound delivery attempts by transport kind and outcome (delivered, retry, failed, disabled).", "kind", "outcome"),
		skillBuilds: newCounterVec("helix_org_skill_builds_total", "Skill builds by outcome (ok, failed).", "outcome"),
		skillBuild: newHistogram("helix_org_skill_build_duration_seconds", "Skill build time: image, start, health and examples.",
			[]float64{1, 5, 15, 30, 60, 120, 300, 900}),
	}
	m.families = []family{m.httpRequests, m.httpDuration, m.toolCalls, m.running, m.finished, m.actDuration,
		m.modelCalls, m.modelTokens, m.modelCost, m.deliveries, m.skillBuilds, m.skillBuild,
		newStoreCollector(st, seq), newMemoryCollector(st), goFamilies{}, processFamilies{}}
	return m, nil
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if err := writeAll(w, m.families); err != nil {
			// The scraper went away mid-answer: nothing to tell it.
			return
		}
	})
}

// HTTPRequest counts one answered request.
func (m *Metrics) HTTPRequest(route string, status int, took time.Duration) {
	m.httpRequests.with(route, strconv.Itoa(status)).add(1)
	m.httpDuration.observe(took.Seconds(), route)
}

// ToolCall counts one tools/call.
func (m *Metrics) ToolCall(tool, outcome string) { m.toolCalls.with(tool, outcome).add(1) }

// ActivationStarted counts an agent that runs.
func (m *Metrics) ActivationStarted() { m.running.v.Add(1) }

// ActivationFinished counts a finished run; started says whether its
// agent ran (and so was counted as running).
func (m *Metrics) ActivationFinished(outcome domain.ActivationStatus, started bool, took time.Duration) {
	if started {
		m.running.v.Add(-1)
	}
	m.finished.with(string(outcome)).add(1)
	m.actDuration.observe(took.Seconds(), string(outcome))
}

// ModelCall counts one relayed model call and what it cost.
func (m *Metrics) ModelCall(model string, input, output int64, cost domain.Money) {
	m.modelCalls.with(model).add(1)
	m.modelTokens.with(model, "input").add(float64(input))
	m.modelTokens.with(model, "output").add(float64(output))
	m.modelCost.with(model).add(cost.Dollars())
}

// Delivery counts one delivery attempt.
func (m *Metrics) Delivery(kind domain.TransportKind, outcome string) {
	m.deliveries.with(string(kind), outcome).add(1)
}

// SkillBuild counts one build of a skill version.
func (m *Metrics) SkillBuild(ok bool, took time.Duration) {
	outcome := "ok"
	if !ok {
		outcome = "failed"
	}
	m.skillBuilds.with(outcome).add(1)
	m.skillBuild.observe(took.Seconds())
}
