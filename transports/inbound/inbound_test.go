package inbound_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/helixml/helix-org/transports/inbound"
)

func TestReadBody(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		declared   int64 // Content-Length; -1 for chunked
		wantStatus int   // 0: read succeeds
	}{
		{"under the limit", "hello", 5, 0},
		{"at the limit", "0123456789", 10, 0},
		{"declared over the limit", "01234567890", 11, http.StatusRequestEntityTooLarge},
		{"chunked over the limit", "01234567890", -1, http.StatusRequestEntityTooLarge},
		{"chunked under the limit", "012", -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader(tt.body)))
			r.ContentLength = tt.declared
			got, err := inbound.ReadBody(httptest.NewRecorder(), r, 10)
			if tt.wantStatus == 0 {
				if err != nil || string(got) != tt.body {
					t.Fatalf("ReadBody = %q, %v; want %q", got, err, tt.body)
				}
				return
			}
			if !errors.Is(err, inbound.ErrRead) {
				t.Fatalf("ReadBody = %q, %v; want an ErrRead", got, err)
			}
			if s := inbound.ReadStatus(err); s != tt.wantStatus {
				t.Errorf("ReadStatus(%v) = %d, want %d", err, s, tt.wantStatus)
			}
		})
	}
	if s := inbound.ReadStatus(errors.New("connection reset")); s != http.StatusBadRequest {
		t.Errorf("ReadStatus(other) = %d, want 400", s)
	}
}

// TestFailHidesServerFaults: a 5xx answers only its status text (the log
// has the detail); a refusal answers its reason.
func TestFailHidesServerFaults(t *testing.T) {
	tests := []struct {
		code              int
		wantBody, wantLog string
	}{
		{http.StatusInternalServerError, "Internal Server Error", "level=ERROR msg=\"thing failed\" err=\"disk /var/secret full\""},
		{http.StatusForbidden, "disk /var/secret full", "level=WARN msg=\"thing refused\" status=403"},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		w := httptest.NewRecorder()
		inbound.Fail(slog.New(slog.NewTextHandler(&logs, nil)), "thing", w, tt.code, errors.New("disk /var/secret full"))
		var got map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != tt.code || got["error"] != tt.wantBody {
			t.Errorf("%d: answered %d %s, want {\"error\":%q}", tt.code, w.Code, w.Body, tt.wantBody)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%d: Content-Type %q", tt.code, ct)
		}
		if !strings.Contains(logs.String(), tt.wantLog) {
			t.Errorf("%d: log %q lacks %q", tt.code, logs.String(), tt.wantLog)
		}
	}
}
