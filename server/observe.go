package server

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/helixml/helix-org/domain"
	"github.com/helixml/helix-org/store"
)

// maxReason bounds what of a refusal's answer the log keeps as its reason.
const maxReason = 200

// ServeHTTP routes the request, counts it in the metrics and logs it:
// always when it was refused (a 4xx other than 404 and 405, with the
// answer's first line as the reason), and every request with
// Config.AccessLog. Neither the query string nor any header is logged:
// tokens travel there.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	s.mux.ServeHTTP(rec, r)
	took := time.Since(start)
	status := rec.code()
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.HTTPRequest(route(r), status, took)
	}
	switch {
	case refused(status):
		s.log.Warn("request refused", "method", r.Method, "route", route(r), "path", r.URL.Path, "status", status,
			"reason", rec.reasonText(status), "remote", r.RemoteAddr)
	case s.cfg.AccessLog:
		s.log.Info("request", "method", r.Method, "route", route(r), "path", r.URL.Path, "status", status,
			"duration", took.Round(time.Microsecond), "bytes", rec.bytes, "remote", r.RemoteAddr)
	}
}

// refused is a client error that is a refusal rather than a miss.
func refused(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusNotFound && status != http.StatusMethodNotAllowed
}

// route is the pattern that served r (set by the mux on r itself), a
// bounded label unlike the path.
func route(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	return r.Pattern
}

// recorder notes a response's status, its size and the start of a client
// error's body. It unwraps for http.ResponseController, which the MCP
// handler, the relay and the UI's live views use to flush and extend
// deadlines.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	reason []byte
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if refused(r.status) && len(r.reason) < maxReason {
		r.reason = append(r.reason, p[:min(len(p), maxReason-len(r.reason))]...)
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush keeps http.Flusher visible to handlers that assert it.
func (r *recorder) Flush() { _ = http.NewResponseController(r.ResponseWriter).Flush() }

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// reasonText is the first line of the answer; of a web page (the UI's
// refusals), whose first line is markup, the status's text.
func (r *recorder) reasonText(status int) string {
	if strings.HasPrefix(r.Header().Get("Content-Type"), "text/html") {
		return http.StatusText(status) + " (a web page)"
	}
	line, _, _ := bytes.Cut(r.reason, []byte("\n"))
	return secretLike().ReplaceAllString(string(bytes.TrimSpace(line)), "<redacted>")
}

// secretLike is what a refusal's answer might echo of a credential: our
// tokens, and the provider keys an upstream error relayed for an
// activation might quote.
var secretLike = domain.LazyRegexp(`\b(` + store.TokenPrefix + `|` + store.ActivationTokenPrefix + `|sk-|xox[a-z]-)[A-Za-z0-9_*.-]+`)
