package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLogFlags: a bad --log-format or --log-level is refused before
// anything opens, naming the valid values.
func TestServeLogFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"format", []string{"--log-format", "xml"}, `--log-format "xml": valid values are text, json`},
		{"level", []string{"--log-level", "loud"}, `--log-level "loud": valid values are debug, info, warn, error`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", tempDB(t), "--envs-dir", filepath.Join(t.TempDir(), "envs")}, tc.args...)
			_, _, err := run(t, "", args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}

// TestLogger: json writes one JSON object a line; the level drops what is below it.
func TestLogger(t *testing.T) {
	for _, tc := range []struct {
		name, format, level string
		want                []string
		wantNot             string
	}{
		{"text info", "text", "info", []string{`level=INFO msg=shown k=v`}, "hidden"},
		{"json warn", "json", "WARN", []string{`"level":"WARN","msg":"warned","k":"v"}`}, "shown"},
		{"json debug", "json", "debug", []string{`"msg":"hidden"`, `"msg":"shown"`, `"msg":"warned"`}, "nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			log, err := logFlags{Format: tc.format, Level: tc.level}.logger(&b)
			if err != nil {
				t.Fatal(err)
			}
			log.Debug("hidden", "k", "v")
			log.Info("shown", "k", "v")
			log.Warn("warned", "k", "v")
			for _, want := range tc.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("log lacks %s:\n%s", want, b.String())
				}
			}
			if strings.Contains(b.String(), tc.wantNot) {
				t.Errorf("log has %q:\n%s", tc.wantNot, b.String())
			}
			if tc.format == "json" {
				for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("not a JSON line: %s", line)
					}
				}
			}
		})
	}
}
