package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestInputEnv(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{"csv":"a\n1","n":2,"ok":true,"nested":{"x":1},"list":[1]}`, []string{"INPUT_CSV=a\n1", "INPUT_N=2", "INPUT_OK=true"}},
		{`{"file-name":"x"}`, []string{"INPUT_FILE_NAME=x"}},
		{`{"big":"` + strings.Repeat("x", maxEnvValue+1) + `"}`, nil},
		{`[1,2]`, nil},
		{`not json`, nil},
	}
	for _, tc := range tests {
		got := inputEnv([]byte(tc.in))
		slices.Sort(got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("inputEnv(%.40s) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestExecuteAndHealth(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "handler.sh")
	os.WriteFile(script, []byte(`read line; echo "{\"got\":\"$INPUT_NAME\"}"; [ "$INPUT_NAME" = fail ] && { echo boom >&2; exit 3; }; true`), 0o644)
	handler := []string{"/bin/sh", script}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { health(w, handler) })
	mux.HandleFunc("POST /execute", func(w http.ResponseWriter, r *http.Request) { execute(w, r, handler, time.Minute) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"healthy", "GET", "/health", "", 200, "ok"},
		{"output", "POST", "/execute", `{"name":"ada"}`, 200, `{"got":"ada"}`},
		{"handler fails", "POST", "/execute", `{"name":"fail"}`, 500, "handler failed: exit status 3\nboom"},
		{"no such route", "GET", "/execute", "", 405, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.want)
			}
		})
	}
	os.Remove(script)
	rec := httptest.NewRecorder()
	health(rec, handler)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("health without the handler = %d", rec.Code)
	}
}
