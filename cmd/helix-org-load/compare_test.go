package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompare builds helix-org and compares it with itself, one small
// round: every figure is measured and printed for both, with the ratio
// and the machine's load.
func TestCompare(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		gotool = "/usr/local/go/bin/go" // where CI installs it (.ci/run)
	}
	bin := filepath.Join(t.TempDir(), "helix-org")
	build := exec.Command(gotool, "build", "-o", bin, "github.com/helixml/helix-org/cmd/helix-org")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build helix-org: %v\n%s", err, out)
	}
	var out strings.Builder
	cfg := config{Compare: "a=" + bin + ",b=" + bin, Rounds: 1, BigWorkers: 2, BigEvents: 40, Calls: 4, Clients: 2, Idle: 10 * time.Millisecond, LongIdle: 20 * time.Millisecond}
	if err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("compare: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, f := range figures {
		line := lineOf(text, f.name+" ("+f.unit+")")
		fields := strings.Fields(strings.TrimPrefix(line, f.name+" ("+f.unit+")"))
		if len(fields) < 3 || fields[0] == "0.0" || fields[1] == "0.0" {
			t.Errorf("figure %q: %q, want a value for a and b and their ratio\n%s", f.name, line, text)
		}
	}
	if !strings.Contains(text, "machine load (1-minute average") || !strings.Contains(text, "round 1 a ") || !strings.Contains(text, "round 1 b ") {
		t.Errorf("compare printed:\n%s", text)
	}
}

func lineOf(text, prefix string) string {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func TestParseBuilds(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		want    int
		wantErr string
	}{
		{"base=" + bin + ",head=" + bin, 2, ""},
		{"head=" + bin, 1, ""},
		{bin, 0, "is not label=path"},
		{"base=", 0, "is not label=path"},
		{"base=/no/such/helix-org", 0, "no such file"},
	}
	for _, tt := range tests {
		got, err := parseBuilds(tt.in)
		switch {
		case tt.wantErr == "" && (err != nil || len(got) != tt.want):
			t.Errorf("parseBuilds(%q) = %d builds, %v; want %d", tt.in, len(got), err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("parseBuilds(%q) err = %v, want one containing %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
