package slack

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/transports/transport"
)

// names says whether text names the worker of a worker's stream: the
// <@U…> mention of the Slack user standing for it, or "@" and its name,
// its id or its id without "w-", in any case, as a whole word. A worker
// no longer hired is named by nobody.
func names(ctx context.Context, st transport.Store, c StreamConfig, text string) (bool, error) {
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
		if strings.TrimSpace(n) != "" && atName(text, n) {
			return true, nil
		}
	}
	return false, nil
}

// atName reports whether text has "@name" (in any case) not inside a
// longer word or handle: "@alice," and "@alice." name alice,
// "@alice.smith", "@alice-bot" and "bob@alice" do not.
func atName(text, name string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || i+1+len(name) > len(text) || !strings.EqualFold(text[i+1:i+1+len(name)], name) {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		if i > 0 && wordRune(before) {
			continue
		}
		if rest := text[i+1+len(name):]; !continues(rest) {
			return true
		}
	}
	return false
}

// continues says whether what follows a name goes on with it: a letter,
// digit or '_', or '.' or '-' followed by one.
func continues(rest string) bool {
	r, n := utf8.DecodeRuneInString(rest)
	switch {
	case rest == "":
		return false
	case r == '.' || r == '-':
		next, _ := utf8.DecodeRuneInString(rest[n:])
		return rest[n:] != "" && wordRune(next)
	}
	return wordRune(r)
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
