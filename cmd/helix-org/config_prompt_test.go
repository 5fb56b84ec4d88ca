package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/helixml/helix-org/agent"
	"github.com/helixml/helix-org/domain"
)

// openPTY opens a pseudo-terminal: what is written to master is typed at
// slave, and what slave echoes can be read from master.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestConfigSetPromptsWithoutEcho: `config set <secret> -` on a terminal
// prompts, turns echo off while the value is typed, and stores it; the
// terminal never shows it.
func TestConfigSetPromptsWithoutEcho(t *testing.T) {
	db := newDB(t)
	master, slave := openPTY(t)
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetArgs([]string{"config", "set", agent.APIKeySetting.Key, "-", "--db", db})
	cmd.SetIn(slave)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(t.Context()) }()

	until(t, 10*time.Second, "echo turned off", func() bool {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		return err == nil && tio.Lflag&unix.ECHO == 0
	})
	if _, err := master.Write([]byte(secret + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("config set: %v\n%s", err, errOut.String())
	}
	if got, want := errOut.String(), agent.APIKeySetting.Key+" (input hidden): \n"; got != want {
		t.Errorf("prompt = %q, want %q", got, want)
	}
	if got, want := out.String(), agent.APIKeySetting.Key+" = "+domain.Redacted+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if v, ok, err := openStore(t, db).Setting(t.Context(), agent.APIKeySetting.Key); err != nil || !ok || v != secret {
		t.Errorf("stored %q (%v, %v), want the typed secret", v, ok, err)
	}

	// Everything the terminal showed, up to a marker written after.
	slave.Write([]byte("END\n"))
	var shown strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(shown.String(), "END") {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		shown.Write(buf[:n])
	}
	if strings.Contains(shown.String(), secret) {
		t.Errorf("the terminal echoed the secret: %q", shown.String())
	}
}
