// Command shim serves a skill's handler over HTTP inside the skill's
// container. It is built static (CGO_ENABLED=0) and copied, with busybox,
// into the base image of the shell template:
//
//	GET  /health   200 once the handler's files are in place
//	POST /execute  runs $HANDLER with the request body on stdin and answers
//	               with its stdout (200), or its exit status and output (500)
//
// Each top-level string (up to 64 KiB), number or boolean of a JSON object
// input is also in the handler's environment as INPUT_<NAME> (upper-cased),
// which saves shell handlers from parsing JSON.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

const (
	maxInput  = 8 << 20
	maxOutput = 8 << 20
	maxStderr = 16 << 10
)

func main() {
	handler := strings.Fields(envOr("HANDLER", "/bin/sh /skill/handler.sh"))
	timeout, err := time.ParseDuration(envOr("EXEC_TIMEOUT", "5m"))
	if err != nil {
		log.Fatalf("EXEC_TIMEOUT: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { health(w, handler) })
	mux.HandleFunc("POST /execute", func(w http.ResponseWriter, r *http.Request) { execute(w, r, handler, timeout) })
	srv := &http.Server{Addr: ":" + envOr("PORT", "8080"), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("skill shim listening on %s, handler %q", srv.Addr, handler)
	log.Fatal(srv.ListenAndServe())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// health reports 200 once every absolute path in the handler command exists.
func health(w http.ResponseWriter, handler []string) {
	for _, p := range handler {
		if strings.HasPrefix(p, "/") {
			if _, err := os.Stat(p); err != nil {
				http.Error(w, "handler missing: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
	}
	fmt.Fprintln(w, "ok")
}

func execute(w http.ResponseWriter, r *http.Request, handler []string, timeout time.Duration) {
	in, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInput))
	if err != nil {
		http.Error(w, "read input: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, handler[0], handler[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), inputEnv(in)...)
	var out, errOut capped
	out.max, errOut.max = maxOutput, maxStderr
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "handler failed: %v\n%s%s", err, errOut.String(), tail(out.String(), 2000))
		return
	}
	if json.Valid(out.Bytes()) {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.Write(out.Bytes())
}

var envName = regexp.MustCompile(`[^A-Z0-9_]`)

// maxEnvValue keeps each variable under the kernel's per-string limit
// (128 KiB); a bigger field is only on stdin.
const maxEnvValue = 64 << 10

// inputEnv turns an object's scalar fields into INPUT_<NAME> variables.
func inputEnv(in []byte) []string {
	var obj map[string]any
	if json.Unmarshal(in, &obj) != nil {
		return nil
	}
	var env []string
	for k, v := range obj {
		name := "INPUT_" + envName.ReplaceAllString(strings.ToUpper(k), "_")
		switch v := v.(type) {
		case string:
			if len(v) <= maxEnvValue {
				env = append(env, name+"="+v)
			}
		case float64, bool:
			env = append(env, fmt.Sprintf("%s=%v", name, v))
		}
	}
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// capped keeps at most max bytes and drops the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
