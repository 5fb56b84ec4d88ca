package orgdir

import (
	"github.com/helixml/helix-org/domain"
)

// budgets.yaml: every budget's limits (set_budget), by scope, target and
// window. What was spent is run history and stays behind: an imported
// budget counts from zero.
var budgetsKind = kind{name: "budgets", export: exportBudgets, load: loadBudgets}

type budgetRecord struct {
	Scope      string  `yaml:"scope"`
	Target     string  `yaml:"target,omitempty"`
	Window     string  `yaml:"window"`
	Tokens     int64   `yaml:"tokens,omitempty"`
	USD        float64 `yaml:"usd,omitempty"`
	SoftTokens int64   `yaml:"softTokens,omitempty"`
	SoftUSD    float64 `yaml:"softUsd,omitempty"`
	SetBy      string  `yaml:"setBy,omitempty"`
	UpdatedAt  string  `yaml:"updatedAt"`
}

func exportBudgets(x *exporter) error {
	bs, err := x.st.ExportBudgets(x.ctx)
	if err != nil || len(bs) == 0 {
		return err
	}
	out := make([]budgetRecord, len(bs))
	for i, b := range bs {
		out[i] = budgetRecord{Scope: string(b.Scope), Target: b.Target, Window: string(b.Window), Tokens: b.Hard.Tokens, USD: b.Hard.Money.Dollars(),
			SoftTokens: b.Soft.Tokens, SoftUSD: b.Soft.Money.Dollars(), SetBy: b.SetBy, UpdatedAt: stamp(b.UpdatedAt)}
	}
	return x.yaml("budgets.yaml", out)
}

func loadBudgets(in *importer) error {
	var recs []budgetRecord
	if err := in.yaml("budgets.yaml", &recs); err != nil {
		return err
	}
	for _, r := range recs {
		b := domain.Budget{Scope: domain.BudgetScope(r.Scope), Target: r.Target, Window: domain.BudgetWindow(r.Window),
			Hard:  domain.Limit{Tokens: r.Tokens, Money: domain.USD(r.USD)},
			Soft:  domain.Limit{Tokens: r.SoftTokens, Money: domain.USD(r.SoftUSD)},
			SetBy: r.SetBy}
		var err error
		if b.UpdatedAt, err = parseStamp("budget "+b.Name()+": updatedAt", r.UpdatedAt); err != nil {
			return err
		}
		if err := in.im.Budget(b); err != nil {
			return err
		}
	}
	return nil
}
