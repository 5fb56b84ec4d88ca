package slack

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/helixml/helix-org/domain"
)

// names says whether text names the worker of a worker's stream: the
// <@U…> mention of the Slack user standing for it, or "@" and its name,
// its id or its id without "w-", in any case, as a whole word. A worker
// no longer hired is named by nobody.
func names(ctx context.Context, st Store, c StreamConfig, text string) (bool, error) {
	if c.User != "" && (strings.Contains(text, "<@"+c.User+">") || strings.Contains(text, "<@"+c.User+"|")) {
		return true, nil
	}
	w, err := st.GetWorker(ctx, c.Worker)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil || !w.Active() {
		return false, err
	}
	for _, n := range []string{w.Name, w.ID, strings.TrimPrefix(w.ID, domain.PrefixWorker)} {
		if strings.TrimSpace(n) != "" && atName(n).MatchString(text) {
			return true, nil
		}
	}
	return false, nil
}

// atName matches "@name" not inside a longer word or handle: "@alice,"
// and "@alice." name alice, "@alice.smith" and "@alice-bot" do not.
func atName(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])@` + regexp.QuoteMeta(name) + `(?:$|[^\p{L}\p{N}_.-]|[.-](?:$|[^\p{L}\p{N}_]))`)
}
