package domain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/helixml/helix-org/domain"
)

func TestPartitionRepo(t *testing.T) {
	files := []string{"store/a.go", "store/b.go", "store/c.go", "cmd/main.go", "docs/x.md", "docs/y.md", "README.md", "go.mod"}
	for _, tc := range []struct {
		name      string
		files     []string
		explorers []string
		want      []domain.ExplorePart
	}{
		{"greenfield: no files, no partitions", nil, []string{"w-a"}, []domain.ExplorePart{}},
		{"one explorer takes every area", files, []string{"w-a"}, []domain.ExplorePart{
			{Part: 1, Worker: "w-a", Areas: []string{".", "cmd", "docs", "store"}, Files: 8, Budget: 5, State: domain.ExploreOpen}}},
		{"the largest areas first, each on the least loaded part", files, []string{"w-a", "w-b"}, []domain.ExplorePart{
			{Part: 1, Worker: "w-a", Areas: []string{"cmd", "store"}, Files: 4, Budget: 5, State: domain.ExploreOpen},
			{Part: 2, Worker: "w-b", Areas: []string{".", "docs"}, Files: 4, Budget: 5, State: domain.ExploreOpen}}},
		{"never more parts than areas", []string{"a.go", "b.go"}, []string{"w-a", "w-b", "w-c"}, []domain.ExplorePart{
			{Part: 1, Worker: "w-a", Areas: []string{"."}, Files: 2, Budget: 5, State: domain.ExploreOpen}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, domain.PartitionRepo(tc.files, tc.explorers, 5)); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExploreCover(t *testing.T) {
	for _, tc := range []struct {
		name         string
		read         []string
		wantRead     []string
		wantUnknown  []string
		wantCoverage float64
	}{
		{"all read, named with slashes", []string{"store/", "/docs", "."}, []string{".", "docs", "store"}, nil, 1},
		{"silence is unknown", nil, nil, []string{".", "docs", "store"}, 0},
		{"areas of other parts and files inside one do not count", []string{"cmd", "store/a.go", "docs"}, []string{"docs"}, []string{".", "store"}, 1.0 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := domain.ExplorePart{Areas: []string{".", "docs", "store"}}
			p.Cover("summary", tc.read)
			if diff := cmp.Diff([]any{domain.ExploreReported, tc.wantRead, tc.wantUnknown, tc.wantCoverage}, []any{p.State, p.Read, p.Unknown, p.Coverage}); diff != "" {
				t.Errorf("cover (-want +got):\n%s", diff)
			}
		})
	}
}
