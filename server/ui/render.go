package ui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/helixml/helix-org/domain"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds one parsed template set per page: the layout and partials
// plus that page's own file. Parsed once at start-up.
type pages map[string]*template.Template

// root is the path the UI's org is served under ("" for the default
// org), which every link a page writes starts with.
func parsePages(root string) pages {
	rootFunc := template.FuncMap{"root": func() string { return root }}
	base := template.Must(template.New("").Funcs(funcs).Funcs(rootFunc).ParseFS(templateFS, "templates/layout.html", "templates/partials.html"))
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := pages{}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, f))
	}
	return out
}

// pageData is what the layout renders around a page's own body.
type pageData struct {
	Title string
	// Nav names the active item of the navigation bar.
	Nav string
	V   *viewer
	// Flash is the error of the write that failed, with what was typed.
	Flash *flash
	// Live is the URL of the page's live view (Server-Sent Events), if any.
	Live string
	// Path is the page's own address: forms carry it back, so a refused
	// write is shown on the page it was made from.
	Path string
	// Refresh, when set, is where the page goes on by itself (a meta
	// refresh): a navigation of this site's own.
	Refresh string
	Body    any
}

// Value is what a form field should show: what was typed into it when
// that form's tool just failed, else def.
func (p pageData) Value(tool, field, def string) string {
	if p.Flash != nil && p.Flash.Tool == tool && p.Flash.Form.Has(field) {
		return p.Flash.Form.Get(field)
	}
	return def
}

// flash is a failed write, shown on the page it came from.
type flash struct {
	Tool   string
	Err    string
	Status int
	Form   url.Values
}

type flashKey struct{}

func contextWithFlash(ctx context.Context, f *flash) context.Context {
	return context.WithValue(ctx, flashKey{}, f)
}

func flashFrom(ctx context.Context) *flash {
	f, _ := ctx.Value(flashKey{}).(*flash)
	return f
}

// render executes a page into memory first, so a template error is a 500
// and never half a page.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name string, d pageData) {
	t, ok := u.pages()[name]
	if !ok {
		panic("no page template " + name)
	}
	if d.Flash == nil {
		d.Flash = flashFrom(r.Context())
	}
	if d.Path == "" {
		d.Path = r.URL.RequestURI()
	}
	if d.Flash != nil && d.Flash.Status != 0 {
		status = d.Flash.Status
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", d); err != nil {
		u.log.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error rendering "+name, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderError shows a page that says what went wrong and what to do.
func (u *UI) renderError(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) {
	u.render(w, r, status, "error", pageData{Title: http.StatusText(status), V: v, Body: msg})
}

// fail shows an error with the status it maps to. A 5xx is logged here,
// once, and shown without internals.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	status := u.cfg.Status(err)
	msg := err.Error()
	if cause, ok := u.cfg.Unavailable(w, err); ok {
		u.log.Error("request failed", "path", r.URL.Path, "err", err, "cause", cause)
	} else if status >= 500 {
		u.log.Error("request failed", "path", r.URL.Path, "err", err)
		msg = "internal error: the server could not complete this; its log says why"
	}
	u.renderError(w, r, v, status, msg)
}

func (u *UI) handleNotFound(w http.ResponseWriter, r *http.Request) {
	v, _ := u.viewerOf(r)
	u.renderError(w, r, v, http.StatusNotFound, "no page at "+r.URL.Path+"; start from the org chart")
}

// sectionErr is a part of a page the viewer may not see, or that failed,
// with the reason shown in its place.
func sectionErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var funcs = template.FuncMap{
	"md":    markdown,
	"when":  when,
	"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"dur":   duration,
	"short": short,
	"json":  prettyJSON,
	// readableJSON shows JSON as sent, but <, > and & as themselves.
	"readableJSON": func(raw json.RawMessage) string { return domain.ReadableJSON(raw) },
	// configText is a config as an edit form's text area starts: empty
	// when there is none.
	"configText": func(raw json.RawMessage) string {
		if t := strings.TrimSpace(string(raw)); t == "" || t == "{}" || t == "null" {
			return ""
		}
		return prettyJSON(raw)
	},
	"join":       strings.Join,
	"clip":       clip,
	"initials":   initials,
	"streamKind": streamKind,
	"dict":       dict,
	"pct":        func(f float64) string { return fmt.Sprintf("%.0f %%", f*100) },
	"logStep":    logStep,
	"exitStatus": exitStatus,
	// statusClass is a status's CSS class: its first word, so "waiting
	// for approval" and "waiting for budget" share status-waiting.
	"statusClass": func(s string) string { first, _, _ := strings.Cut(s, " "); return first },
}

// logStep is what an activation-log entry says of a tool: the tool
// called or answering, and a result's status (ok or error).
func logStep(ev domain.Event) (step struct{ Tool, Status string }) {
	json.Unmarshal(ev.Message.Extra, &step)
	return step
}

// exitStatus is how the run an exit entry ends came out, read from the
// status its text starts with ("succeeded", "failed: exit status 1"); ""
// for any other entry, or one that starts with no status.
func exitStatus(ev domain.Event) string {
	if ev.Message.Subject != string(domain.LogExit) {
		return ""
	}
	word := ev.Message.Body
	if i := strings.IndexAny(word, ": \n"); i >= 0 {
		word = word[:i]
	}
	switch s := domain.ActivationStatus(word); s {
	case domain.ActivationSucceeded, domain.ActivationFailed, domain.ActivationInterrupted, domain.ActivationCancelled:
		return string(s)
	}
	return ""
}

// when formats a time for people: date and minute, UTC, stated.
func when(t any) string {
	switch t := t.(type) {
	case time.Time:
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case *time.Time:
		if t == nil {
			return ""
		}
		return when(*t)
	}
	return fmt.Sprint(t)
}

func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func short(n int, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// clip cuts s to n bytes at a rune boundary, keeping its line breaks.
func clip(n int, s string) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n… (cut)"
}

// initials are up to two first letters of a name, for an avatar.
func initials(name string) string {
	var out []rune
	for _, w := range strings.Fields(name) {
		if r := []rune(w); len(out) < 2 && len(r) > 0 {
			out = append(out, r[0])
		}
	}
	return string(out)
}

// dict builds a map from pairs, to hand a nested template several values.
func dict(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}

func prettyJSON(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) != nil {
			return string(raw)
		}
		v = x
	}
	// <, > and & as themselves: the page escapes what it shows.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// queryString builds ?k=v&… from pairs, leaving out empty values.
func queryString(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
