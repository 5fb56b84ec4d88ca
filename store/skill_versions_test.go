package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

func TestSkillVersions(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	seed(t, st)
	ctx := t.Context()
	v1 := domain.SkillVersion{Name: "csv_sum", Version: 1, Status: domain.VersionOK, Description: "v1", InputSchema: json.RawMessage(`{"type":"object"}`),
		Template: "shell", Files: map[string]string{"Dockerfile": "FROM skill-base\n", "handler.sh": "echo 1\n"},
		Examples: []domain.SkillExample{{Input: json.RawMessage(`{}`), Output: json.RawMessage(`1`)}}, BuildLog: "Successfully built", CreatedBy: "w-owner"}
	v2 := v1
	v2.Version, v2.Status, v2.Error, v2.Description, v2.Files = 2, domain.VersionFailed, "example 1 of 1 failed", "v2", map[string]string{"handler.sh": "echo 2\n"}
	for _, v := range []domain.SkillVersion{v1, v2} {
		if err := st.SaveSkillVersion(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SaveSkillVersion(ctx, v1); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("saving version 1 twice: %v; want ErrConflict", err)
	}
	got, err := st.GetSkillVersion(ctx, "csv_sum", 1)
	if err != nil {
		t.Fatal(err)
	}
	v1.CreatedAt = got.CreatedAt
	if diff := cmp.Diff(v1, got); diff != "" {
		t.Errorf("version 1 (-want +got):\n%s", diff)
	}
	list, err := st.SkillVersions(ctx, "csv_sum")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Version != 1 || list[1].Status != domain.VersionFailed || list[1].Error != "example 1 of 1 failed" || list[0].Files != nil || list[0].BuildLog != "" {
		t.Errorf("listing = %+v; want both, oldest first, without files or logs", list)
	}
	if _, err := st.GetSkillVersion(ctx, "csv_sum", 9); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown version: %v", err)
	}

	// Roll back from a live v3 to v1: the record takes v1, v3 is marked.
	v3 := v1
	v3.Version, v3.Description = 3, "v3"
	st.SaveSkillVersion(ctx, v3)
	st.SaveSkill(ctx, "w-owner", domain.Skill{Name: "csv_sum", Description: "v3", Version: 3, Status: domain.SkillReady, CreatedBy: "w-owner"})
	sk, err := st.RollbackSkill(ctx, "w-owner", domain.Skill{Name: "csv_sum", Description: "v1", Version: 1, Status: domain.SkillReady, CreatedBy: "w-owner"}, 3)
	if err != nil || sk.Version != 1 || sk.Description != "v1" {
		t.Fatalf("rollback = %+v, %v", sk, err)
	}
	if v, _ := st.GetSkillVersion(ctx, "csv_sum", 3); v.Status != domain.VersionRolledBack {
		t.Errorf("v3 status = %s", v.Status)
	}
	if err := st.DeleteSkill(ctx, "w-owner", "csv_sum"); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.SkillVersions(ctx, "csv_sum"); len(list) != 0 {
		t.Errorf("versions left after delete: %+v", list)
	}
}

func TestSaveFile(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := t.Context()
	a, err := st.SaveFile(ctx, domain.Attachment{Name: "chart.svg", ContentType: "image/svg+xml"}, []byte("<svg/>"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Attachment(ctx, a.Ref)
	if err != nil {
		t.Fatal(err)
	}
	want := store.AttachmentFile{Attachment: domain.Attachment{Name: "chart.svg", ContentType: "image/svg+xml", Size: 6, Ref: a.Ref}, Content: []byte("<svg/>")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("saved file (-want +got):\n%s", diff)
	}
}
