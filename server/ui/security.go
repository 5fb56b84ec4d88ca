package ui

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// ReboundHost spots DNS rebinding exactly as the go-sdk does on the MCP
// endpoint, which answers some calls without it (server/calls.go): a
// request that reached a loopback listener under a name that is not
// loopback.
func ReboundHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host)
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
