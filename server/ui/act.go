package ui

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/helixml/helix-org/tools"
)

// handleAct is the one endpoint every form that changes the org posts to:
// POST /ui/act/{tool}. It calls the tool through tools.Invoke as the
// viewer, exactly as a tools/call over MCP would run, then goes on to the
// page named by next ({id} becomes the new record's id). A refusal is
// shown on the page the form came from (back), with what was typed kept.
func (u *UI) handleAct(w http.ResponseWriter, r *http.Request, v *viewer) {
	tool := r.PathValue("tool")
	next := r.PostFormValue("next")
	back := r.PostFormValue("back")
	if back == "" {
		back = strings.ReplaceAll(next, "{id}", "")
	}
	args, err := formArgs(r.PostForm)
	var out any
	if err == nil {
		out, err = tools.Invoke(r.Context(), v.env, v.granted, tool, args)
	}
	if wantsJSON(r) {
		u.actJSON(w, r, err)
		return
	}
	if err != nil {
		u.showFailure(w, r, v, tool, localPath(back), err)
		return
	}
	if _, held := tools.Held(out); held {
		// Nothing was made yet: the inbox shows the call waiting.
		next = "/ui/inbox"
	}
	http.Redirect(w, r, expandNext(next, out), http.StatusSeeOther)
}

// showFailure renders the page the form came from, as a GET, with the
// error on it and the status the error maps to.
func (u *UI) showFailure(w http.ResponseWriter, r *http.Request, v *viewer, tool, next string, err error) {
	status := u.cfg.Status(err)
	msg := err.Error()
	if cause, ok := u.cfg.Unavailable(w, err); ok {
		u.log.Error("tool call from the web UI", "tool", tool, "worker", v.Worker.ID, "err", err, "cause", cause)
	} else if status >= 500 {
		u.log.Error("tool call from the web UI", "tool", tool, "worker", v.Worker.ID, "err", err)
		msg = "internal error: " + tool + " could not complete; the server's log says why"
	}
	shown := tool + ": " + msg
	if plain, ok := formTerms(err, r.PostForm); ok {
		shown = plain
	}
	f := &flash{Tool: tool, Err: shown, Status: status, Form: r.PostForm}
	target, _ := url.Parse(next)
	g := r.Clone(r.Context())
	g.Method, g.URL, g.RequestURI, g.Body = http.MethodGet, target, next, http.NoBody
	g = g.WithContext(contextWithFlash(g.Context(), f))
	u.mux.ServeHTTP(w, g)
}

// expandNext fills {id} in the target with the id of what the tool made
// (a spec task's tools answer with it as "task"), and keeps the target on
// this UI.
func expandNext(next string, out any) string {
	if !strings.Contains(next, "{id}") {
		return localPath(next)
	}
	var rec struct {
		ID   string `json:"id"`
		Task string `json:"task"`
	}
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &rec)
	return localPath(strings.ReplaceAll(next, "{id}", url.PathEscape(cmp.Or(rec.ID, rec.Task))))
}

// wantsJSON marks a form the page script sent itself (the chat and stream
// composers), which wants the outcome, not a page.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func (u *UI) actJSON(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err == nil {
		w.Write([]byte(`{"ok":true}`))
		return
	}
	status := u.cfg.Status(err)
	msg := err.Error()
	if cause, ok := u.cfg.Unavailable(w, err); ok {
		u.log.Error("tool call from the web UI", "err", err, "cause", cause)
	} else if status >= 500 {
		u.log.Error("tool call from the web UI", "err", err)
		msg = "internal error; the server's log says why"
	}
	if plain, ok := formTerms(err, r.PostForm); ok {
		msg = plain
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
