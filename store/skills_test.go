package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func TestSkillLifecycle(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	st := storetest.NewWithClock(t, clock.Now)
	seed(t, st)
	ctx := t.Context()
	t0 := clock.Now()

	v1 := domain.Skill{Name: "csv_sum", Description: "Sum CSV columns", InputSchema: json.RawMessage(`{"type":"object"}`),
		Template: "shell", Version: 1, Image: "img:v1", Container: "c1", Status: domain.SkillReady, CreatedBy: "w-owner"}
	if _, err := st.SaveSkill(ctx, "w-owner", v1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := st.TouchSkill(ctx, "csv_sum"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	v2 := v1
	v2.Version, v2.Image, v2.Container = 2, "img:v2", "c2"
	got, err := st.SaveSkill(ctx, "w-owner", v2)
	if err != nil {
		t.Fatal(err)
	}
	used := t0.Add(time.Minute)
	want := v2
	want.CreatedAt, want.UpdatedAt, want.LastUsedAt = t0, t0.Add(2*time.Minute), nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second version (-want +got):\n%s", diff)
	}
	// A new version starts a fresh idle clock only through TouchSkill.
	st.TouchSkill(ctx, "csv_sum")
	got, _ = st.GetSkill(ctx, "csv_sum")
	if got.LastUsedAt == nil || got.LastUsedAt.Before(used) {
		t.Errorf("last used = %v", got.LastUsedAt)
	}

	if err := st.SetSkillState(ctx, "csv_sum", domain.SkillStopped, "", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetSkill(ctx, "csv_sum"); got.Status != domain.SkillStopped || got.Container != "" || got.Version != 2 {
		t.Errorf("after stop: %+v", got)
	}

	if _, err := st.GrantTool(ctx, "", domain.Grant{WorkerID: "w-owner", Tool: "skill_csv_sum"}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSkill(ctx, "w-owner", "csv_sum"); err != nil {
		t.Fatal(err)
	}
	tools, _ := st.LiveTools(ctx, "w-owner")
	for _, tool := range tools {
		if tool == "skill_csv_sum" {
			t.Error("deleting a skill left its grant behind")
		}
	}
	all, _ := st.ListSkills(ctx)
	if len(all) != 0 {
		t.Errorf("skills after delete = %+v", all)
	}

	var actions []string
	evs, _ := st.ReadEvents(ctx, store.EventQuery{StreamIDs: []string{domain.StreamOrg}})
	for _, ev := range evs {
		var c store.Change
		json.Unmarshal(ev.Message.Extra, &c)
		if c.Target == "csv_sum" {
			actions = append(actions, c.Action)
		}
	}
	if diff := cmp.Diff([]string{"create_skill", "create_skill", "delete_skill"}, actions); diff != "" {
		t.Errorf("audit trail (-want +got):\n%s", diff)
	}
}

func TestSkillErrors(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	_, errGet := st.GetSkill(ctx, "nope")
	errState := st.SetSkillState(ctx, "nope", domain.SkillReady, "", "")
	errDelete := st.DeleteSkill(ctx, "w-owner", "nope")
	_, errName := st.SaveSkill(ctx, "w-owner", domain.Skill{Name: "Bad Name", Status: domain.SkillReady})
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"get unknown", errGet, domain.ErrNotFound},
		{"state of unknown", errState, domain.ErrNotFound},
		{"delete unknown", errDelete, domain.ErrNotFound},
		{"bad name", errName, domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("err = %v, want %v", tt.err, tt.want)
			}
		})
	}
}
