package domain

import (
	"regexp"
	"sync"
)

// LazyRegexp compiles expr on first use, not at start-up: every package
// variable compiled at init is paid by each start of the binary, which
// most of them are never used in.
func LazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
