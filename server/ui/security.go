package ui

import (
	"net"
	"net/http"

	"github.com/helixml/helix-org/domain"
)

// contentSecurityPolicy allows nothing from another origin and nothing
// inline: every script and style is a file under /ui/assets/.
const contentSecurityPolicy = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// maxFormBytes bounds a form post: a role's markdown (256 KiB) and room to spare.
const maxFormBytes = 1 << 20

// secure wraps every UI response in the headers that keep a page from
// being framed, leaking its URL or running foreign code, and refuses
// cross-origin writes and DNS-rebinding requests before any handler runs.
func (u *UI) secure(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.renderError(w, r, nil, http.StatusForbidden, "cross-origin request refused: this page can only be changed from helix-org's own pages")
	}))
	inner := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if ReboundHost(r) {
			http.Error(w, "forbidden: invalid Host header "+r.Host, http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		inner.ServeHTTP(w, r)
	})
}

// ReboundHost is domain.ReboundHost of a request: the direct MCP path
// (server/calls.go), which answers some calls without the go-sdk, and the
// web UI ask it.
func ReboundHost(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	return domain.ReboundHost(local.String(), r.Host)
}
