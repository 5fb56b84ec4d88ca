package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
)

// SpendBy is what spend over time is grouped by.
type SpendBy string

// The groupings of spend over time, as `spend` reports them.
const (
	SpendByWorker SpendBy = "worker"
	SpendByStream SpendBy = "stream"
	SpendByModel  SpendBy = "model"
)

// spendByColumn is each grouping's column of the ledger.
var spendByColumn = map[SpendBy]string{SpendByWorker: "model_calls.worker_id", SpendByStream: "activation_streams.stream_id", SpendByModel: "model_calls.model"}

// SeriesQuery asks for spend over time: bucket i holds the calls made in
// [Edges[i], Edges[i+1]), grouped by By, of the workers in Workers (of
// every worker when nil).
type SeriesQuery struct {
	Edges   []time.Time
	By      SpendBy
	Workers []string
}

// maxBuckets bounds a series: each bucket is a placeholder of its query.
const maxBuckets = 400

// SeriesPoint is what one group spent in one bucket.
type SeriesPoint struct {
	Bucket int
	Key    string
	domain.Spend
}

// ledgerRow is a row of SpendSeries or TopRuns: spendSums's columns (GORM
// does not fill an embedded struct from Scan) and the bucket or run.
type ledgerRow struct {
	Bucket    int
	Grp       string
	WorkerID  string
	StartedAt time.Time
	Calls     int64
	Input     int64
	Output    int64
	Nanos     int64
	Unpriced  int64
	Outside   int64
}

func (r ledgerRow) spend() domain.Spend {
	return spendSums{Calls: r.Calls, Input: r.Input, Output: r.Output, Nanos: r.Nanos, Unpriced: r.Unpriced, Outside: r.Outside}.spend()
}

// SpendSeries adds up the ledger per bucket and group in one query: the
// buckets are a CASE over the edges, so both databases run the same SQL.
// Buckets and groups with no calls are left out.
func (s *Store) SpendSeries(ctx context.Context, q SeriesQuery) ([]SeriesPoint, error) {
	col, ok := spendByColumn[q.By]
	switch {
	case !ok:
		return nil, domain.EnumError("by", "grouping", q.By, []SpendBy{SpendByWorker, SpendByStream, SpendByModel})
	case len(q.Edges) < 2 || len(q.Edges) > maxBuckets+1:
		return nil, domain.Invalid("edges", "need 2 to %d bucket edges, got %d", maxBuckets+1, len(q.Edges))
	case q.Workers != nil && len(q.Workers) == 0:
		return nil, nil
	}
	var bucket strings.Builder
	args := make([]any, 0, len(q.Edges)-1)
	bucket.WriteString("CASE")
	for i, edge := range q.Edges[1:] {
		fmt.Fprintf(&bucket, " WHEN model_calls.created_at < ? THEN %d", i)
		args = append(args, edge.UTC())
	}
	bucket.WriteString(" END")
	until := q.Edges[len(q.Edges)-1]
	db := calls(s.read(ctx), "", "", q.Edges[0], &until)
	if q.By == SpendByStream {
		db = db.Joins("JOIN activation_streams ON activation_streams.activation_id = model_calls.activation_id")
	}
	if q.Workers != nil {
		db = db.Where("model_calls.worker_id IN ?", q.Workers)
	}
	var rows []ledgerRow
	err := db.Select(bucket.String()+" AS bucket, "+col+" AS grp, "+spendColumns, args...).Group("bucket, grp").Order("bucket, grp").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("spend over time by %s: %w", q.By, err)
	}
	out := make([]SeriesPoint, len(rows))
	for i, r := range rows {
		out[i] = SeriesPoint{Bucket: r.Bucket, Key: r.Grp, Spend: r.spend()}
	}
	return out, nil
}

// RunSpend is what one run cost in a period.
type RunSpend struct {
	ActivationID string
	WorkerID     string
	StartedAt    time.Time
	domain.Spend
}

// TopRuns are the runs that cost most in [since, until) — money first,
// then tokens — of the workers in workers (every worker when nil), at
// most limit of them.
func (s *Store) TopRuns(ctx context.Context, since time.Time, until *time.Time, workers []string, limit int) ([]RunSpend, error) {
	if workers != nil && len(workers) == 0 {
		return nil, nil
	}
	if limit <= 0 || limit > MaxReadLimit {
		limit = MaxReadLimit
	}
	db := calls(s.read(ctx), "", "", since, until).Joins("JOIN activations ON activations.id = model_calls.activation_id")
	if workers != nil {
		db = db.Where("model_calls.worker_id IN ?", workers)
	}
	var rows []ledgerRow
	err := db.Select("model_calls.activation_id AS grp, activations.worker_id AS worker_id, activations.started_at AS started_at, " + spendColumns).
		Group("model_calls.activation_id, activations.worker_id, activations.started_at").
		Order("nanos DESC, COALESCE(SUM(model_calls.input_tokens + model_calls.output_tokens), 0) DESC, grp").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("top runs by cost: %w", err)
	}
	out := make([]RunSpend, len(rows))
	for i, r := range rows {
		out[i] = RunSpend{ActivationID: r.Grp, WorkerID: r.WorkerID, StartedAt: r.StartedAt.UTC(), Spend: r.spend()}
	}
	return out, nil
}
