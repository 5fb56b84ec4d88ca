package designdocs

import (
	"context"
	"fmt"
	"strings"
)

// maxListed bounds how many paths an exploration's partitioning reads:
// enough to see a large repository's shape, never its whole history.
const maxListed = 200_000

// TrackedFiles lists the paths tracked at HEAD of the repository at top,
// what an explore phase partitions. A repository without a commit has
// none: it is greenfield.
func TrackedFiles(ctx context.Context, top string) ([]string, error) {
	if _, err := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return nil, nil
	}
	out, err := gitRaw(ctx, top, "ls-tree", "-r", "-z", "--name-only", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", top, err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" && len(files) < maxListed {
			files = append(files, f)
		}
	}
	return files, nil
}
