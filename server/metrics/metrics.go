// Package metrics holds the server's Prometheus metrics in a registry of
// its own (never the global one, so two servers in one process never
// collide). Lower layers — dispatch, delivery, the relay, the skill
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
	reg     *prometheus.Registry
	handler http.Handler

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	toolCalls    *prometheus.CounterVec
	running      prometheus.Gauge
	finished     *prometheus.CounterVec
	actDuration  *prometheus.HistogramVec
	modelCalls   *prometheus.CounterVec
	modelTokens  *prometheus.CounterVec
	modelCost    *prometheus.CounterVec
	deliveries   *prometheus.CounterVec
	skillBuilds  *prometheus.CounterVec
	skillBuild   prometheus.Histogram
}

// New builds the metrics over st. Events count from now on.
func New(ctx context.Context, st Store) (*Metrics, error) {
	seq, err := st.LastSeq(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: read the event log's end: %w", err)
	}
	m := &Metrics{reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_http_requests_total",
			Help: "HTTP requests by route pattern and status."}, []string{"route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "helix_org_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern.", Buckets: prometheus.DefBuckets}, []string{"route"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_mcp_tool_calls_total",
			Help: "MCP tool calls by tool and outcome (ok, tool_error, rejected)."}, []string{"tool", "outcome"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "helix_org_activations_running",
			Help: "Activations whose agent is running."}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_activations_finished_total",
			Help: "Activations finished, by outcome."}, []string{"outcome"}),
		actDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "helix_org_activation_duration_seconds",
			Help: "Activation run time, by outcome.", Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800}}, []string{"outcome"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_model_calls_total",
			Help: "Model calls relayed for activations, by model."}, []string{"model"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_model_tokens_total",
			Help: "Model tokens relayed, by model and direction (input, output)."}, []string{"model", "direction"}),
		modelCost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_model_cost_usd_total",
			Help: "Cost of relayed model calls in US dollars, by model, as llm.prices priced them."}, []string{"model"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_delivery_attempts_total",
			Help: "Outbound delivery attempts by transport kind and outcome (delivered, retry, failed, disabled)."}, []string{"kind", "outcome"}),
		skillBuilds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "helix_org_skill_builds_total",
			Help: "Skill builds by outcome (ok, failed)."}, []string{"outcome"}),
		skillBuild: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "helix_org_skill_build_duration_seconds",
			Help: "Skill build time: image, start, health and examples.", Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 900}}),
	}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.toolCalls, m.running, m.finished, m.actDuration,
		m.modelCalls, m.modelTokens, m.modelCost, m.deliveries, m.skillBuilds, m.skillBuild,
		newStoreCollector(st, seq), newMemoryCollector(st), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	return m, nil
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return m.handler }

// HTTPRequest counts one answered request.
func (m *Metrics) HTTPRequest(route string, status int, took time.Duration) {
	m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(took.Seconds())
}

// ToolCall counts one tools/call.
func (m *Metrics) ToolCall(tool, outcome string) { m.toolCalls.WithLabelValues(tool, outcome).Inc() }

// ActivationStarted counts an agent that runs.
func (m *Metrics) ActivationStarted() { m.running.Inc() }

// ActivationFinished counts a finished run; started says whether its
// agent ran (and so was counted as running).
func (m *Metrics) ActivationFinished(outcome domain.ActivationStatus, started bool, took time.Duration) {
	if started {
		m.running.Dec()
	}
	m.finished.WithLabelValues(string(outcome)).Inc()
	m.actDuration.WithLabelValues(string(outcome)).Observe(took.Seconds())
}

// ModelCall counts one relayed model call and what it cost.
func (m *Metrics) ModelCall(model string, input, output int64, cost domain.Money) {
	m.modelCalls.WithLabelValues(model).Inc()
	m.modelTokens.WithLabelValues(model, "input").Add(float64(input))
	m.modelTokens.WithLabelValues(model, "output").Add(float64(output))
	m.modelCost.WithLabelValues(model).Add(cost.Dollars())
}

// Delivery counts one delivery attempt.
func (m *Metrics) Delivery(kind domain.TransportKind, outcome string) {
	m.deliveries.WithLabelValues(string(kind), outcome).Inc()
}

// SkillBuild counts one build of a skill version.
func (m *Metrics) SkillBuild(ok bool, took time.Duration) {
	outcome := "ok"
	if !ok {
		outcome = "failed"
	}
	m.skillBuilds.WithLabelValues(outcome).Inc()
	m.skillBuild.Observe(took.Seconds())
}
