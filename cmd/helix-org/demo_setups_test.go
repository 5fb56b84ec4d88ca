package main

import (
	"io"
	"testing"
)

// TestDemoSetupsOnOneServer runs two demos' setup.sh one after the other
// on one server, as someone trying them in turn would: the MLOps
// newsletter's succeeds though the newsroom's made streams, roles and
// positions of the same names (s-research, r-researcher, p-journalist…),
// and, run again, changes nothing. (The other demos share no names; each
// demo's own test runs its setup twice.)
func TestDemoSetupsOnOneServer(t *testing.T) {
	t.Parallel()
	st := demoStore(t)
	base, _, _ := startServe(t, st, io.Discard)
	setupOnce(t, st, base, "newsroom")
	runSetup(t, st, base, "mlops-newsletter")
}
