package ui

import "net/http"

// handlePreview renders markdown the way a page will show it, for the
// role and identity editors' live preview. It changes nothing, but it is
// a POST with the CSRF token like every other write-shaped request.
func (u *UI) handlePreview(w http.ResponseWriter, r *http.Request, v *viewer) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(markdown(r.PostFormValue("markdown"))))
}
