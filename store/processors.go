package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/helixml/helix-org/domain"
)

// processorRow is a processor's definition (domain.Processor); its config
// is compiled by dispatch/processor, which the store does not know.
type processorRow struct {
	ID          string `gorm:"primaryKey"`
	InputStream string `gorm:"not null;index"`
	Kind        string `gorm:"not null"`
	Config      string `gorm:"not null"`
	// Outputs is a JSON array of stream ids, sorted.
	Outputs   string `gorm:"not null"`
	CreatedBy string
	CreatedAt time.Time
	Label     string `gorm:"not null;default:''"`
	Processed int64  `gorm:"not null;default:0"`
	Failed    int64  `gorm:"not null;default:0"`
	LastError string `gorm:"not null;default:''"`
}

func (processorRow) TableName() string { return "processors" }

func (r processorRow) toDomain() domain.Processor {
	p := domain.Processor{ID: r.ID, Input: r.InputStream, Kind: domain.ProcessorKind(r.Kind), Config: json.RawMessage(r.Config),
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), Label: storedLabel(r.Label), Processed: r.Processed, Failed: r.Failed, LastError: r.LastError}
	json.Unmarshal([]byte(r.Outputs), &p.Outputs)
	return p
}

// CreateProcessor stores a processor whose config its kind has already
// compiled. In one transaction it checks that actor may read the input,
// creates the outputs that do not exist as local streams, refuses an
// output that would let more workers read than the input's readers, and
// refuses a definition that would close a cycle of processors. The
// processor carries the label of what is written under ctx.
func (s *Store) CreateProcessor(ctx context.Context, actor string, p domain.Processor) (domain.Processor, error) {
	if err := p.Validate(); err != nil {
		return domain.Processor{}, err
	}
	p.Outputs = domain.SortedOutputs(p.Outputs)
	outputs, _ := json.Marshal(p.Outputs)
	var row processorRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		id, err := pickID(tx, &processorRow{}, "processor", domain.PrefixProcessor, p.ID, string(p.Kind)+" "+strings.TrimPrefix(p.Input, domain.PrefixStream))
		if err != nil {
			return err
		}
		label, err := s.processorInput(tx, actor, p.Input, WritingLabel(ctx))
		if err != nil {
			return err
		}
		for i, o := range p.Outputs {
			if err := s.processorOutput(tx, actor, fmt.Sprintf("outputs[%d]", i), o, label); err != nil {
				return err
			}
		}
		if err := refuseCycle(tx, p.Input, p.Outputs); err != nil {
			return err
		}
		row = processorRow{ID: id, InputStream: p.Input, Kind: string(p.Kind), Config: string(p.Config), Outputs: string(outputs),
			CreatedBy: actor, CreatedAt: s.Now(), Label: WritingLabel(ctx).Encode()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "create_processor", Actor: actor, Target: id, After: row.toDomain()})
	})
	if err != nil {
		return domain.Processor{}, fmt.Errorf("create processor: %w", err)
	}
	return row.toDomain(), nil
}

// processorInput checks the input stream and returns the label its
// outputs carry at least: the processor's own, narrowed by the input
// stream's readers.
func (s *Store) processorInput(tx *gorm.DB, actor, input string, own domain.Label) (domain.Label, error) {
	if kind, _ := domain.StreamKindOf(input); kind == domain.StreamActivations {
		return own, domain.Invalid("input", "%s is an activation log, which wakes nothing; choose a stream of events", input)
	}
	if err := newAuthz(tx).reads(actor, input); err != nil {
		return own, err
	}
	if err := inUse(tx, "input", input); err != nil {
		return own, err
	}
	readers, err := streamReaders(tx, input)
	if err != nil {
		return own, err
	}
	if readers != nil {
		own = own.Join(domain.ReadBy(readers, "stream "+input, domain.BySystem))
	}
	return own, nil
}

// processorOutput checks one output, creating it as a local stream when it
// does not exist: only a local stream the system does not own, on which
// whatever carries label may be read by everyone who reads there. A
// processor never sends outside: a person or a worker's publish does.
func (s *Store) processorOutput(tx *gorm.DB, actor, field, id string, label domain.Label) error {
	if slices.Contains(domain.ReservedStreamIDs, id) || slices.ContainsFunc(domain.ReservedStreamPrefixes, func(p string) bool { return strings.HasPrefix(id, p) }) {
		return domain.Invalid(field, "%s is a stream the system writes; a processor writes to streams of its own", id)
	}
	var st streamRow
	err := tx.Select("id", "transport_kind", "created_by", "private", "archived_at").Where("id = ?", id).Take(&st).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		row := streamRow{ID: id, Name: strings.TrimPrefix(id, domain.PrefixStream), Description: "Written by a processor.",
			TransportKind: string(domain.TransportLocal), TransportConfig: "{}", CreatedBy: actor, CreatedAt: s.Now()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if err := s.audit(tx, Change{Action: "create_stream", Actor: actor, Target: id, After: s.stream(row)}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else if st.TransportKind != string(domain.TransportLocal) {
		return domain.Invalid(field, "%s is a %s stream; a processor writes only to local streams (a worker's publish sends outside)", id, st.TransportKind)
	} else if st.ArchivedAt != nil {
		return domain.StreamArchived(field, id)
	}
	readers, err := streamReaders(tx, id)
	if err != nil {
		return err
	}
	if !label.Within(readers) {
		return domain.Forbidden("%s: %s would let its readers read what only %s may (%s)", field, id, strings.Join(label.Readers, ", "), label.Narrowed)
	}
	if st.Private && actor != "" && actor != st.CreatedBy && !slices.Contains(readers, actor) {
		return domain.Forbidden("%s: %s is private; only its members (and %s, who created it) write to it", field, id, st.CreatedBy)
	}
	return nil
}

// refuseCycle refuses a processor from input to outputs when some chain
// of processors already leads from one of its outputs back to its input.
func refuseCycle(tx *gorm.DB, input string, outputs []string) error {
	var rows []processorRow
	if err := tx.Select("id", "input_stream", "outputs").Find(&rows).Error; err != nil {
		return err
	}
	next := map[string][]processorRow{}
	for _, r := range rows {
		next[r.InputStream] = append(next[r.InputStream], r)
	}
	// via[s] is the chain of processors that reaches s from an output.
	via := map[string][]string{}
	queue := slices.Clone(outputs)
	for _, o := range outputs {
		via[o] = nil
	}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		if at == input {
			return domain.Invalid("outputs", "would close a cycle of processors: %s → %s → %s; a processor may not feed its own input", input, strings.Join(via[at], " → "), input)
		}
		for _, r := range next[at] {
			var outs []string
			json.Unmarshal([]byte(r.Outputs), &outs)
			for _, o := range outs {
				if _, seen := via[o]; !seen {
					via[o] = append(slices.Clone(via[at]), at+" ("+r.ID+")")
					queue = append(queue, o)
				}
			}
		}
	}
	return nil
}

// GetProcessor returns one processor, with its pending count.
func (s *Store) GetProcessor(ctx context.Context, id string) (domain.Processor, error) {
	var r processorRow
	if err := s.read(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return domain.Processor{}, notFoundOr(err, "processor", id)
	}
	ps, err := s.withPending(ctx, []processorRow{r})
	if err != nil {
		return domain.Processor{}, err
	}
	return ps[0], nil
}

// ListProcessors lists processors by id: every one, or those that read or
// write stream.
func (s *Store) ListProcessors(ctx context.Context, stream string) ([]domain.Processor, error) {
	var rows []processorRow
	if err := s.read(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list processors: %w", err)
	}
	if stream != "" {
		rows = slices.DeleteFunc(rows, func(r processorRow) bool {
			p := r.toDomain()
			return p.Input != stream && !slices.Contains(p.Outputs, stream)
		})
	}
	return s.withPending(ctx, rows)
}

func (s *Store) withPending(ctx context.Context, rows []processorRow) ([]domain.Processor, error) {
	out := mapRows(rows, processorRow.toDomain)
	if len(out) == 0 {
		return out, nil
	}
	var counts []struct {
		ProcessorID string
		N           int64
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	if err := s.read(ctx).Model(&processorWorkRow{}).Select("processor_id, COUNT(*) AS n").
		Where("processor_id IN ? AND status = ?", ids, workPending).Group("processor_id").Scan(&counts).Error; err != nil {
		return nil, fmt.Errorf("pending work of processors: %w", err)
	}
	for _, c := range counts {
		if i := slices.Index(ids, c.ProcessorID); i >= 0 {
			out[i].Pending = c.N
		}
	}
	return out, nil
}

// DeleteProcessor removes a processor and the work it had not done: its
// creator, a worker above its creator, or the operator. What it already
// wrote stays on its outputs.
func (s *Store) DeleteProcessor(ctx context.Context, actor, id string) (domain.Processor, error) {
	var row processorRow
	err := s.write(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&row).Error; err != nil {
			return notFoundOr(err, "processor", id)
		}
		if actor != "" && actor != row.CreatedBy && row.CreatedBy != "" {
			if err := newAuthz(tx).manages(actor, row.CreatedBy); err != nil {
				return err
			}
		}
		if err := tx.Where("processor_id = ?", id).Delete(&processorWorkRow{}).Error; err != nil {
			return err
		}
		if err := tx.Delete(&processorRow{ID: id}).Error; err != nil {
			return err
		}
		return s.audit(tx, Change{Action: "delete_processor", Actor: actor, Target: id, Before: row.toDomain()})
	})
	if err != nil {
		return domain.Processor{}, fmt.Errorf("delete processor %s: %w", id, err)
	}
	return row.toDomain(), nil
}
